# fish completion for confine(1). Written by hand; the flag-docs test checks it against the flag table,
# src/cli/flag_docs.h.

# Whether the option $argv[1] takes a value: the word after it is that value, not the command.
function __confine_takes_value
    contains -- $argv[1] --profile -w --workspace --net --allow --net-log --upstream-proxy --secret --for --broker --publish \
        --ro --rw --tmpfs --device --gpus \
        --mask --scan-skip --scan-walk --env --pass-env --preserve-fd --user --seccomp --worktree --require \
        --memory --memory-swap --pids --pids-limit --cpus --tmpfs-size --shm-size --status-fd --report --log \
        --checkpoint-exclude
end

# True while the sandboxed command has not started: no `--` and no plain word (other than the subcommand) yet.
function __confine_before_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    set -l seen_sub 0
    for w in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --
                return 1
            case '-*'
                __confine_takes_value $w; and set skip 1
            case probe explain doctor learn checkpoints
                test $seen_sub -eq 0; or return 1
                set seen_sub 1
            case '*'
                return 1
        end
    end
    return 0
end

# The index in the command line where the sandboxed command starts, for completing it and its arguments.
function __confine_command_start
    set -l words (commandline -opc)
    set -l skip 0
    for i in (seq 2 (count $words))
        set -l w $words[$i]
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $w
            case --
                echo (math $i + 1)
                return 0
            case '-*'
                __confine_takes_value $w; and set skip 1
            case explain learn
                continue
            case probe doctor checkpoints
                return 1  # they run no command
            case run
                # `confine run` only as the first word; elsewhere `run` is the command.
                test $i -eq 2; and return 1
                echo $i
                return 0
            case '*'
                echo $i
                return 0
        end
    end
    return 1
end

function __confine_in_command
    not __confine_before_command
    and __confine_command_start >/dev/null
end

function __confine_complete_command
    set -l start (__confine_command_start); or return
    set -l words (commandline -opc) (commandline -ct)
    set -l cmd $words[$start..-1]
    if test (count $cmd) -le 1
        __fish_complete_command (commandline -ct)
    else
        complete -C (string join -- ' ' (string escape -- $cmd))
    end
end

# `confine run`, which takes docker's flags (src/cli/docker_run.cc), then the image: `host` or a directory.
function __confine_run
    set -l words (commandline -opc)
    test "$words[2]" = run
end

function __confine_subcommand
    set -l words (commandline -opc)
    contains -- $argv[1] $words
end

function __confine_no_subcommand
    not __confine_subcommand probe; and not __confine_subcommand explain; and not __confine_subcommand doctor
    and not __confine_subcommand learn; and not __confine_subcommand checkpoints
end

# The ids of the checkpoints of the workspace given by -w on the command line (else the current directory's).
function __confine_checkpoint_ids
    set -l words (commandline -opc)
    set -l workspace
    for i in (seq 2 (count $words))
        if contains -- $words[(math $i - 1)] -w --workspace
            set workspace -w $words[$i]
        end
    end
    $words[1] checkpoints list $workspace 2>/dev/null | string replace -rf '^  ([0-9]{8}T[0-9]{6}Z[-0-9]*)  .*' '$1'
end

# The names of your own profiles and the machine's, where `confine --profile NAME` finds them.
function __confine_profile_names
    set -l config $XDG_CONFIG_HOME
    string match -q -- '/*' "$config"; or set config $HOME/.config
    for file in $config/confine/profiles/*.toml /etc/confine/profiles/*.toml
        test -f $file; and basename $file .toml
    end
end

set -l profiles default read-only workspace-write full-network codex claude aider gemini npm pip cargo go gpu

complete -c confine -f

# After `--` (or the first plain word) everything belongs to the sandboxed command.
complete -c confine -n __confine_in_command -a '(__confine_complete_command)'

# Subcommands, offered where the command could start.
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a probe -d 'Show which kernel layers this machine offers'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a explain -d 'Show what a run with these options would enforce'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a doctor -d 'Test your containment: PASS/FAIL per check'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a learn -d 'Record a run you trust as a profile'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a checkpoints -d 'List or restore the workspace checkpoints'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a run -d 'Run a docker run command line (docker flags, IMAGE dir or host)'
complete -c confine -n '__confine_before_command; and __confine_no_subcommand' -a '(__fish_complete_command)'
complete -c confine -n '__confine_before_command; and __confine_subcommand explain' -a '(__fish_complete_command)'
complete -c confine -n '__confine_before_command; and __confine_subcommand learn' -a '(__fish_complete_command)'

# confine probe
complete -c confine -n '__confine_subcommand probe' -l json -d 'Machine-readable output'
complete -c confine -n '__confine_subcommand explain' -l json -d 'Machine-readable output'

# confine checkpoints [list [--json] | restore [ID|latest] [--force] | rm ID | prune [--keep N]] [-w DIR]
set -l checkpoints '__confine_subcommand checkpoints; and not __confine_run'
set -l no_action "$checkpoints; and not __confine_subcommand list; and not __confine_subcommand restore; and not __confine_subcommand rm; and not __confine_subcommand prune"
complete -c confine -n $no_action -f \
    -a 'list\t"List the checkpoints, newest first" restore\t"Put the workspace back as it was at a checkpoint" rm\t"Remove a checkpoint" prune\t"Remove all but the newest checkpoints"'
complete -c confine -n "$checkpoints; and begin; __confine_subcommand restore; or __confine_subcommand rm; end" -f -a 'latest (__confine_checkpoint_ids)' -d 'A checkpoint'
complete -c confine -n "$checkpoints; and __confine_subcommand restore" -l force -d 'Restore even over changes made after the run'
complete -c confine -n "$checkpoints; and __confine_subcommand prune" -l keep -x -d 'How many of the newest checkpoints to keep'
complete -c confine -n "$no_action; or __confine_subcommand list" -l json -d 'Machine-readable output'
complete -c confine -n $checkpoints -s w -l workspace -x -a '(__fish_complete_directories)' -d 'The workspace'
complete -c confine -n $checkpoints -s h -l help -d 'Print the help message and exit'

# The sandbox options (confine, confine explain, confine doctor and confine learn).
set -l opts '__confine_before_command; and not __confine_subcommand probe; and not __confine_subcommand checkpoints'
complete -c confine -n $opts -l profile -x -a "$profiles (__confine_profile_names) (__fish_complete_suffix .toml)" -d 'Start from a profile'
complete -c confine -n $opts -s w -l workspace -x -a '(__fish_complete_directories)' -d 'Project directory (read-write, working directory)'
complete -c confine -n $opts -l net -x -a 'none\t"Only loopback (default)" proxy\t"Only the --allow hosts, through confine\'s proxy" veth\t"The same proxy over a veth pair (root only)" host\t"No isolation"' -d Network
complete -c confine -n $opts -l allow -x -d 'Host[:port] the sandbox may reach (--net proxy/veth)'
complete -c confine -n $opts -l net-log -r -F -d 'Append one JSON line per proxy decision or published connection to FILE'
complete -c confine -n $opts -l check-sni -d 'CONNECT tunnels must carry TLS with the allowed SNI'
complete -c confine -n $opts -l upstream-proxy -x -d 'Send allowed requests through http://HOST:PORT'
complete -c confine -n $opts -l secret -x -d 'NAME[=env:VAR|file:PATH|cmd:COMMAND]: a placeholder inside'
complete -c confine -n $opts -l for -x -d 'Hosts that receive the matching --secret value'
complete -c confine -n $opts -l broker -x -d 'PORT=https://HOST: plain HTTP inside, verified TLS outside'
complete -c confine -n $opts -l publish -x -d 'Listen on [HOSTADDR:]HOSTPORT, forward to PORT inside'
complete -c confine -n $opts -l ro -r -F -d 'Bind SRC[:DEST] read-only'
complete -c confine -n $opts -l rw -r -F -d 'Bind SRC[:DEST] read-write'
complete -c confine -n $opts -l tmpfs -x -a '(__fish_complete_directories)' -d 'Mount an empty writable tmpfs at DEST'
complete -c confine -n $opts -l device -r -F -d 'A host device SRC[:DEST[:PERMS]], or a CDI device VENDOR/CLASS=NAME'
complete -c confine -n $opts -l gpus -x -a 'all device=' -d 'NVIDIA GPUs through their CDI spec'
complete -c confine -n $opts -l mask -r -F -d 'Hide PATH (reads as empty)'
complete -c confine -n $opts -l scan-skip -x -d 'Do not walk directories named NAME for secret files'
complete -c confine -n $opts -l scan-walk -x -d 'Walk directories named NAME, skipped by default'
complete -c confine -n $opts -l env -x -a '(set -xn | string replace -r \'$\' =)' -d 'Set NAME=VALUE inside'
complete -c confine -n $opts -l pass-env -x -a '(set -xn)' -d 'Keep a variable that scrubbing would drop'
complete -c confine -n $opts -l preserve-fd -x -d 'Keep inherited file descriptor N open'
complete -c confine -n $opts -l user -x -a '(__fish_complete_users)' -d 'UID[:GID] the command sees inside'
complete -c confine -n $opts -l allow-git-config -d 'Leave .git/hooks and .git/config writable'
complete -c confine -n $opts -l allow-nested -d 'Let the command create namespaces'
complete -c confine -n $opts -l seccomp -r -F -a '(__fish_complete_suffix .toml)' -d 'Load this seccomp policy (TOML)'
complete -c confine -n $opts -l seccomp-log -d 'Log every seccomp denial to the kernel log'
complete -c confine -n $opts -l best-effort -d 'Run even if a promise cannot be enforced'
complete -c confine -n $opts -l require -x -a '(__fish_complete_list , "printf \'%s\n\' namespaces landlock seccomp")' -d 'Layers that must be enforced even with --best-effort'
complete -c confine -n $opts -l no-namespaces -d 'Fallback mode: Landlock + seccomp + no_new_privs only'
complete -c confine -n $opts -l checkpoint -d 'Save the workspace outside it before the run'
complete -c confine -n $opts -l checkpoint-exclude -x -d 'With --checkpoint: names not to save (node_modules, *.o)'
complete -c confine -n $opts -l worktree -x -d 'Run in a new git worktree of BRANCH beside the repository'
complete -c confine -n $opts -l memory -x -d 'Memory limit, e.g. 512m or 4g'
complete -c confine -n $opts -l memory-swap -x -d 'Memory plus swap (-1: unlimited swap)'
complete -c confine -n $opts -l pids -x -d 'Most processes and threads at once'
complete -c confine -n $opts -l pids-limit -x -d 'Most processes and threads at once'
complete -c confine -n $opts -l cpus -x -d 'CPU time in CPUs, e.g. 0.5 or 2'
complete -c confine -n $opts -l tmpfs-size -x -d 'Size of each in-memory directory (default 1g)'
complete -c confine -n $opts -l shm-size -x -d 'Size of /dev/shm (default 64m)'
complete -c confine -n $opts -l status-fd -x -d 'Write the layers applied as JSON to fd N'
complete -c confine -n $opts -l report -r -F -d 'Write the layers applied as JSON to FILE'
complete -c confine -n $opts -l log -r -F -d 'Append one JSON line per refusal to FILE'

# Only before a subcommand.
set -l top '__confine_before_command; and __confine_no_subcommand'
complete -c confine -n $top -s v -l verbose -d 'Say what was set up'
complete -c confine -n $top -s q -l quiet -d 'Print only errors'
complete -c confine -n $top -l version -d 'Display the version and exit'
complete -c confine -n '__confine_before_command' -s h -l help -d 'Print the help message and exit'

# confine run: docker's flags, then the image.
set -l run __confine_run
complete -c confine -n $run -a host -d "The host's system directories, read-only"
complete -c confine -n $run -a '(__fish_complete_directories)' -d 'Image directory'
complete -c confine -n $run -s v -l volume -r -F -d 'Bind a host path: SRC:DST[:ro|rw]'
complete -c confine -n $run -l mount -x -d 'type=bind,source=SRC,target=DST or type=tmpfs,target=DST'
complete -c confine -n $run -s w -l workdir -x -d 'Working directory inside (absolute)'
complete -c confine -n $run -s e -l env -x -a '(set -xn)' -d "Set NAME=VALUE, or pass the host's NAME"
complete -c confine -n $run -l env-file -r -F -d 'Read variables from a file'
complete -c confine -n $run -l network -x -a 'none proxy veth host' -d Network
complete -c confine -n $run -l net -x -a 'none host proxy' -d Network
complete -c confine -n $run -l allow -x -d 'Host[:port] the sandbox may reach (--network proxy)'
complete -c confine -n $run -s p -l publish -x -d 'Publish a TCP port: [HOSTADDR:]HOSTPORT:PORT'
complete -c confine -n $run -s m -l memory -x -d 'Memory limit (cgroup v2)'
complete -c confine -n $run -l memory-swap -x -d 'Memory plus swap (-1: unlimited swap)'
complete -c confine -n $run -l pids-limit -x -d 'Most processes and threads at once'
complete -c confine -n $run -l cpus -x -d 'CPU time, in CPUs'
complete -c confine -n $run -l shm-size -x -d 'Size of /dev/shm (default 64m)'
complete -c confine -n $run -l tmpfs-size -x -d 'Size of /tmp, /run and every --tmpfs without size='
complete -c confine -n $run -l cap-drop -x -d 'Accepted: every capability is dropped anyway'
complete -c confine -n $run -l security-opt -x -a 'no-new-privileges seccomp=' -d 'no-new-privileges or seccomp=FILE'
complete -c confine -n $run -s u -l user -x -d 'UID[:GID] inside, numeric (default 0:0)'
complete -c confine -n $run -l read-only -d "The image's directories read-only"
complete -c confine -n $run -l tmpfs -x -d 'An empty tmpfs at DST[:size=N,mode=M]'
complete -c confine -n $run -l device -r -F -d 'A host device at DEST, or a CDI device VENDOR/CLASS=NAME'
complete -c confine -n $run -l gpus -x -a 'all device=' -d 'NVIDIA GPUs through their CDI spec'
complete -c confine -n $run -s h -l hostname -x -d 'Hostname inside'
complete -c confine -n $run -l rm -d 'Accepted: nothing outlives a run anyway'
complete -c confine -n $run -s i -l interactive -d 'Keep stdin open (otherwise it reads as empty)'
complete -c confine -n $run -s t -l tty -d 'The command uses your terminal'
complete -c confine -n $run -l init -d "Accepted: confine's own pid 1 reaps and forwards signals"
complete -c confine -n $run -l best-effort -d 'Run even if a limit or layer cannot be enforced here'
complete -c confine -n $run -l verbose -d 'Say what was set up'
complete -c confine -n $run -s q -l quiet -d 'Print only errors'
complete -c confine -n $run -l help -d 'Print the help and exit'
