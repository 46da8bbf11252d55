#!/usr/bin/env python3
"""flag-docs: the flag documentation against its one table (src/cli/flag_docs.h).

Every flag of the table must be shown by the `--help` of each command that takes it (with the table's
placeholder and help), have an entry in man/confine.1 (OPTIONS, the SYNOPSIS for a subcommand's own flags, the
`run` entry of SUBCOMMANDS for `confine run`'s) and be offered by completions/confine.bash, completions/_confine
and completions/confine.fish in the right place; the completions must also know which options take a value
(else they would take the value for the command). And `--help` must show no flag the table lacks: a flag added
to the parser without a table entry fails here.

Usage: check.py CONFINE PRINT_FLAG_TABLE SOURCE_ROOT
"""
import re
import subprocess
import sys
from pathlib import Path

# The --help of each command, and the sets of the table whose flags it shows.
COMMANDS = {
    (): ("help", "sandbox", "top"),
    ("explain",): ("help", "sandbox", "explain"),
    ("doctor",): ("help", "sandbox"),
    ("learn",): ("help", "sandbox"),
    ("probe",): ("help", "probe"),
    ("checkpoints",): ("help", "checkpoints", "list"),
    ("checkpoints", "list"): ("help", "checkpoints", "list"),
    ("checkpoints", "restore"): ("help", "checkpoints", "restore"),
    ("checkpoints", "rm"): ("help", "checkpoints"),
    ("checkpoints", "prune"): ("help", "checkpoints", "prune"),
    ("run",): ("run",),
}

failures = []


def fail(message):
    failures.append(message)


class Flag:
    def __init__(self, line):
        self.set, self.names_text, self.value, self.help = line.split("\t")
        self.names = self.names_text.split(",")

    def __str__(self):
        return f"{self.names_text} ({self.set})"


def read_table(printer):
    out = subprocess.run([printer], check=True, capture_output=True, text=True).stdout
    table = [Flag(line) for line in out.splitlines()]
    if len(table) < 50:
        sys.exit(f"the flag table printed {len(table)} flags: expected them all")
    return table


def token_pattern(name):
    """A flag name standing alone: not a prefix of a longer one (--net of --net-log) nor a suffix (-w of --x-w)."""
    return r"(?<![\w-])" + re.escape(name) + r"(?![\w-])"


def token(name):
    return re.compile(token_pattern(name))


# --- --help ------------------------------------------------------------------------------------------------------

def help_text(confine, words):
    run = subprocess.run([confine, *words, "--help"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"`confine {' '.join(words)} --help` exited {run.returncode}: {run.stderr.strip()}")
    return run.stdout


def shown_flags(text):
    """The option lines of CLI11's help: `  -w,--workspace DIR   help` → {"-w,--workspace": line}."""
    shown = {}
    for line in text.splitlines():
        m = re.match(r"  (-[^\s]*)", line)
        if m:
            shown[m.group(1)] = line
    return shown


def check_help(confine, table):
    for words, sets in COMMANDS.items():
        command = " ".join(("confine",) + words)
        text = help_text(confine, words)
        shown = shown_flags(text)
        expected = [f for f in table if f.set in sets]
        for flag in expected:
            line = shown.pop(flag.names_text, None)
            if line is None:
                fail(f"`{command} --help` does not show {flag}")
                continue
            head = f"  {flag.names_text}" + (f" {flag.value}" if flag.value else "")
            if not re.match(re.escape(head) + r"(\s|:|$)", line):
                fail(f"`{command} --help` shows {flag} as `{line.strip()}`, not with the table's `{flag.value}`")
            # The help may be wrapped to the next line; --scan-skip's fills in its `{}`.
            first_words = flag.help.split("{}")[0][:60]
            if first_words not in text:
                fail(f"`{command} --help` does not give {flag} the table's help: `{first_words}...`")
        for names in shown:
            fail(f"`{command} --help` shows {names}, which src/cli/flag_docs.h lacks: add it to the table")


# --- man/confine.1 -----------------------------------------------------------------------------------------------

def plain_roff(text):
    """The man page's text without font changes and with \\- as -, so that flags read as they are typed."""
    text = re.sub(r"\\f[BIRP]", "", text)
    return text.replace("\\-", "-").replace("\\&", "")


def man_section(man, title):
    m = re.search(r"^\.SH " + re.escape(title) + r"\n(.*?)(?=^\.SH |\Z)", man, re.S | re.M)
    if not m:
        fail(f"man/confine.1 has no {title} section")
        return ""
    return m.group(1)


def check_man(root, table):
    man = (root / "man/confine.1").read_text()
    # An OPTIONS entry is the line after a .TP: the flag's names and its value.
    entries = "\n".join(re.findall(r"^\.TP\n(.*)$", man_section(man, "OPTIONS"), re.M))
    synopsis = man_section(man, "SYNOPSIS")
    run = re.search(r"^\.TP\n\.B run\n(.*)", man_section(man, "SUBCOMMANDS"), re.S | re.M)
    places = {
        "help": ("an entry in OPTIONS", entries),
        "sandbox": ("an entry in OPTIONS", entries),
        "top": ("an entry in OPTIONS", entries),
        "probe": ("the SYNOPSIS", synopsis),
        "explain": ("the SYNOPSIS", synopsis),
        "checkpoints": ("the SYNOPSIS", synopsis),
        "list": ("the SYNOPSIS", synopsis),
        "restore": ("the SYNOPSIS", synopsis),
        "prune": ("the SYNOPSIS", synopsis),
        "run": ("the `run` entry of SUBCOMMANDS", run.group(1) if run else ""),
    }
    for flag in table:
        where, text = places[flag.set]
        for name in flag.names:
            if not token(name).search(plain_roff(text)):
                fail(f"man/confine.1: {name} of {flag} is not in {where}")


# --- completions -------------------------------------------------------------------------------------------------

def region(text, start, end, what):
    """The text from the line matching `start` to the first match of `end` after it."""
    m = re.search(start + r".*?" + end, text, re.S | re.M)
    if not m:
        fail(f"{what}: not found (the checker looks for /{start}/ ... /{end}/)")
        return ""
    return m.group(0)


def check_completion(file, table, places, names_of, takes_value_lists):
    """places: set -> text the set's flags must be in; names_of: how the file writes a flag name."""
    for flag in table:
        text = places.get(flag.set, places["other"])
        for name in flag.names:
            if not re.search(names_of(name), text):
                fail(f"{file}: {name} of {flag} is not offered where it belongs")
    for what, text in takes_value_lists:
        for flag in table:
            if flag.set == "sandbox" and flag.value:
                for name in flag.names:
                    if not token(name).search(text):
                        fail(f"{file}: {what} lacks {name}, which takes a value")


def check_bash(root, table):
    text = (root / "completions/confine.bash").read_text()
    run = region(text, r"^[ \t]*if \[\[ \$\{words\[1\]\} == run \]\]", r"^    fi$", "confine.bash: the `run` block")
    places = {
        "run": run,
        "sandbox": region(text, r"local sandbox_opts='", r"'", "confine.bash: sandbox_opts"),
        "other": text.replace(run, ""),
    }
    skipped = region(text, r"^[ \t]*case \$word in", r"\(\(i\+\+\)\)", "confine.bash: the options whose value is skipped")
    check_completion("completions/confine.bash", table, places, token_pattern,
                     [("the options whose value is skipped (case $word in ... ((i++)))", skipped)])


def check_zsh(root, table):
    text = (root / "completions/_confine").read_text()
    run = region(text, r"^elif [^\n]*\$words\[2\] == run \]\]", r"^(elif|else)", "_confine: the `run` branch")
    places = {
        "run": run,
        "sandbox": region(text, r"^sandbox_opts=\(", r"^\)", "_confine: sandbox_opts"),
        "other": text.replace(run, ""),
    }
    check_completion("completions/_confine", table, places, token_pattern, [])
    # In an _arguments spec, an option that takes a value is written NAME= or NAME+.
    for flag in table:
        if flag.set == "sandbox" and flag.value:
            for name in flag.names:
                if not re.search(r"(?<![\w-])" + re.escape(name) + r"[=+]", places["sandbox"]):
                    fail(f"completions/_confine: {name} is not written {name}= (it takes a value)")


def check_fish(root, table):
    text = (root / "completions/confine.fish").read_text()
    lines = text.splitlines()
    places = {
        "run": "\n".join(line for line in lines if "-n $run " in line),
        "sandbox": "\n".join(line for line in lines if "-n $opts " in line),
        "other": "\n".join(line for line in lines if "-n $run " not in line),
    }

    def option(name):  # complete ... -l workspace, -s w
        return (r"-l " + re.escape(name[2:]) if name.startswith("--") else r"-s " + re.escape(name[1:])) + r"(?![\w-])"

    takes_value = region(text, r"^function __confine_takes_value$", r"^end$", "confine.fish: __confine_takes_value")
    check_completion("completions/confine.fish", table, places, option,
                     [("__confine_takes_value (the options whose value is skipped)", takes_value)])


def main():
    confine, printer, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    table = read_table(printer)
    check_help(confine, table)
    check_man(root, table)
    check_bash(root, table)
    check_zsh(root, table)
    check_fish(root, table)
    for message in failures:
        print(f"FAIL: {message}", file=sys.stderr)
    if failures:
        print(f"{len(failures)} difference(s) from the flag table, src/cli/flag_docs.h", file=sys.stderr)
        return 1
    print(f"the documentation of all {len(table)} flags agrees with the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
