#!/usr/bin/env python3
"""Generate a deterministic, realistic-looking project workspace with exactly N regular files.

    gen-workspace.py DIR [N=100000]

Layout (for N = 100 000; other N scale the same shares):
  .git/            ~10 % : objects/xx/<38 hex> (loose objects), refs, hooks/*.sample, config, HEAD, packed-refs
  node_modules/    ~50 % : packages (some @scoped), each with package.json, lib/, dist/, test/, nested node_modules/
  src/, test/, docs/ ~40 % : a tree 4-6 directory levels deep of source files with ordinary names, ~10 files
                           per directory
  secrets the confine start-up scan must find: .env, .env.local, .env.production, config/.env.test,
  certs/server.pem, certs/ca.pem, keys/id_rsa, keys/id_rsa.pub, secrets/ (a directory of files), a deep
  src/.../.env, and a few node_modules/*/test/fixtures/*.pem like real packages ship (~22 secret paths in all).

Everything is derived from a SHA-256 counter, so the same N gives the same tree on every machine and Python version.
Files hold a few bytes (~450 MB on disk with 4 KiB blocks). The tree is built in DIR.tmp-PID and renamed to DIR when complete, so a half-built DIR is
never left behind. Prints the number of files and directories created.
"""
import hashlib
import os
import sys

WORDS = ("app api auth cache client config core data db event form handler http index io job kernel layout "
         "log mail model net parser plugin queue render router schema server service session store stream "
         "task theme token ui user util view worker widget").split()
PKG = ("lodash react react-dom express chalk debug commander semver glob minimatch yargs uuid axios moment "
       "rxjs tslib webpack babel-core eslint typescript prettier jest mocha esbuild rollup vite postcss "
       "ajv qs ms mime bluebird async underscore classnames dotenv ws body-parser cookie").split()
SRC_EXT = (".ts", ".tsx", ".js", ".json", ".css", ".md", ".py", ".go", ".rs", ".cpp", ".h", ".yaml")


class Gen:
    def __init__(self, root):
        self.root = root
        self.ctr = 0
        self.files = 0

    def h(self, tag=""):
        self.ctr += 1
        return hashlib.sha256(f"{self.ctr}:{tag}".encode()).hexdigest()

    def pick(self, seq, tag=""):
        return seq[int(self.h(tag)[:8], 16) % len(seq)]

    def mkdir(self, rel):
        p = os.path.join(self.root, rel)
        if not os.path.isdir(p):
            os.makedirs(p)
        return rel

    def write(self, rel, data=None):
        p = os.path.join(self.root, rel)
        with open(p, "w") as f:
            f.write(data if data is not None else rel + "\n")
        self.files += 1


def build(root, n):
    g = Gen(root)
    os.makedirs(root)
    secrets = [".env", ".env.local", ".env.production", "config/.env.test", "certs/server.pem", "certs/ca.pem",
               "keys/id_rsa", "keys/id_rsa.pub", "secrets/db-password.txt", "secrets/api-token",
               "secrets/prod/service-account.json", "src/services/payments/gateway/.env"]
    for s in secrets:
        g.mkdir(os.path.dirname(s) or ".")
        g.write(s, "SECRET=do-not-leak\n")

    # .git (~10 %)
    g.mkdir(".git")
    for f, d in (("HEAD", "ref: refs/heads/main\n"), ("config", "[core]\n\tbare = false\n"),
                 ("description", "bench\n"), ("packed-refs", "# pack-refs\n"), ("index", "DIRC")):
        g.write(".git/" + f, d)
    for hook in ("pre-commit", "pre-push", "commit-msg", "post-update", "pre-rebase", "update"):
        g.mkdir(".git/hooks")
        g.write(f".git/hooks/{hook}.sample", "#!/bin/sh\n")
    for ref in ("heads/main", "heads/dev", "tags/v1.0", "remotes/origin/main"):
        g.mkdir(os.path.dirname(".git/refs/" + ref))
        g.write(".git/refs/" + ref, g.h("ref")[:40] + "\n")
    git_target = n // 10
    while g.files < git_target:
        oid = g.h("obj")
        d = g.mkdir(f".git/objects/{oid[:2]}")
        g.write(f"{d}/{oid[2:40]}", "x")

    # node_modules (~50 %)
    nm_target = g.files + n // 2
    i = 0
    while g.files < nm_target:
        name = PKG[i % len(PKG)] + ("" if i < len(PKG) else f"-{i // len(PKG)}")
        if i % 7 == 3:
            name = f"@{g.pick(WORDS, 'scope')}/{name}"
        base = g.mkdir(f"node_modules/{name}")
        g.write(f"{base}/package.json", '{"name": "%s", "version": "1.0.0"}\n' % name)
        g.write(f"{base}/README.md")
        g.write(f"{base}/LICENSE")
        for sub in ("lib", "dist", "lib/internal", "dist/esm", "test"):
            d = g.mkdir(f"{base}/{sub}")
            for k in range(6 + int(g.h("nf")[:2], 16) % 10):
                g.write(f"{d}/{g.pick(WORDS, 'f')}-{k}{g.pick(('.js', '.d.ts', '.map', '.cjs', '.mjs'), 'e')}")
        if i % 150 == 5:  # a few packages ship test fixture keys: these must be found by the scan too
            d = g.mkdir(f"{base}/test/fixtures")
            g.write(f"{d}/key.pem", "-----BEGIN PRIVATE KEY-----\n")
            g.write(f"{d}/cert.pem", "-----BEGIN CERTIFICATE-----\n")
        if i % 5 == 1:  # nested node_modules: depth 4-6
            dep = g.mkdir(f"{base}/node_modules/{g.pick(PKG, 'dep')}/lib/util")
            for k in range(8):
                g.write(f"{dep}/{g.pick(WORDS, 'df')}-{k}.js")
        i += 1

    # src/, test/, docs/, tools/, packages/ (the rest): a tree built breadth first, each directory holding 4-15
    # files and 1-4 subdirectories, branches ending 4-6 levels deep. That gives ~10 files per directory, like
    # real source trees (the Linux kernel has ~15, Chromium ~10); the scan's cost grows with directories.
    from collections import deque
    queue = deque((t, 1, 4 + i % 3) for i, t in enumerate(("src", "test", "docs", "tools", "packages")))
    j = 0
    while g.files < n:
        if not queue:  # every branch ended: start another top-level package
            queue.append((f"packages/{g.pick(WORDS, 'pkg')}-{j}", 2, 6))
        d, depth, maxdepth = queue.popleft()
        g.mkdir(d)
        for k in range(4 + int(g.h("nf")[:2], 16) % 12):
            if g.files >= n:
                break
            g.write(f"{d}/{g.pick(WORDS, 'sf')}_{j}_{k}{g.pick(SRC_EXT, 'se')}")
        if depth < maxdepth:
            for k in range(1 + int(g.h("ns")[:2], 16) % 4):
                queue.append((f"{d}/{g.pick(WORDS, 'dir')}{k if k else ''}", depth + 1, maxdepth))
        j += 1
    return g


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dest = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    if os.path.isdir(dest):
        print(f"{dest}: exists, kept")
        return 0
    tmp = f"{dest}.tmp-{os.getpid()}"
    g = build(tmp, n)
    os.rename(tmp, dest)
    ndirs = sum(len(d) for _, d, _ in os.walk(dest))
    print(f"{dest}: {g.files} files, {ndirs} directories")
    return 0


if __name__ == "__main__":
    sys.exit(main())
