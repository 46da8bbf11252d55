# bash completion for confine(1)                                       -*- shell-script -*-
# Written by hand; the flag-docs test checks it against the flag table, src/cli/flag_docs.h.

# The names of your own profiles and the machine's, where `confine --profile NAME` finds them (the built-in ones
# are listed below).
_confine_profile_names()
{
    local config=${XDG_CONFIG_HOME:-} dir file
    [[ $config == /* ]] || config=$HOME/.config
    for dir in "$config/confine/profiles" /etc/confine/profiles; do
        for file in "$dir"/*.toml; do
            [[ -f $file ]] || continue
            file=${file##*/}
            printf '%s\n' "${file%.toml}"
        done
    done
}

# The ids of the checkpoints of the workspace given by -w in the words so far (else the current directory's).
_confine_checkpoint_ids()
{
    local i workspace=()
    for ((i = 1; i < cword; i++)); do
        [[ ${words[i]} == -w || ${words[i]} == --workspace ]] && workspace=(-w "${words[i + 1]}")
    done
    "${words[0]}" checkpoints list "${workspace[@]}" 2>/dev/null | sed -n 's/^  \([0-9]\{8\}T[0-9]\{6\}Z[-0-9]*\)  .*/\1/p'
}

_confine()
{
    local cur prev words cword split
    _init_completion -s || return

    local profiles='default read-only workspace-write full-network codex claude aider gemini npm pip cargo go gpu'
    local sandbox_opts='--profile -w --workspace --net --allow --net-log --check-sni --upstream-proxy --secret --for --broker --publish
        --ro --rw
        --tmpfs --device --gpus --mask --scan-skip --scan-walk --env --pass-env --preserve-fd --user --allow-git-config
        --allow-nested --seccomp --seccomp-log --best-effort --require --no-namespaces --memory --memory-swap --pids
        --pids-limit --cpus --tmpfs-size --shm-size --checkpoint --checkpoint-exclude --worktree --status-fd --report --log'

    # `confine run` takes docker's flags (src/cli/docker_run.cc), then the image: `host` or a directory.
    if [[ ${words[1]} == run ]]; then
        if [[ $prev == --network || $prev == --net ]]; then
            COMPREPLY=($(compgen -W 'none proxy veth host' -- "$cur"))
        elif [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-v --volume --mount -w --workdir -e --env --env-file --network --net --allow -p --publish
                -m --memory --memory-swap --pids-limit --cpus --shm-size --tmpfs-size --cap-drop --security-opt -u --user --read-only --tmpfs --device --gpus -h
                --hostname --rm -i --interactive -t --tty --init --best-effort --verbose -q --quiet --help' -- "$cur"))
        else
            COMPREPLY=($(compgen -W 'host' -- "$cur"))
            _filedir -d
        fi
        return
    fi

    # The subcommand, if any, and whether the command (after `--` or the first plain word) has started.
    local i sub='' action='' word
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        case $word in
            --)
                _command_offset $((i + 1))
                return
                ;;
            --profile | -w | --workspace | --net | --allow | --net-log | --upstream-proxy | --secret | --for | --broker | --publish | \
            --ro | --rw | --tmpfs | --device | --gpus | \
            --mask | --scan-skip | --scan-walk | --env | --pass-env | --preserve-fd | --user | --seccomp | \
            --require | --memory | --memory-swap | --pids | --pids-limit | --cpus | --tmpfs-size | --shm-size | \
            --status-fd | --report | --log | --worktree | --checkpoint-exclude)
                ((i++))
                ;;
            -*) ;;
            *)
                # `checkpoints` takes words of its own (list, restore ID …), never a command.
                if [[ $sub == checkpoints ]]; then
                    [[ -n $action ]] || action=$word
                elif [[ -z $sub && ($word == probe || $word == explain || $word == doctor || $word == learn || $word == checkpoints) ]]; then
                    sub=$word
                else
                    _command_offset $i
                    return
                fi
                ;;
        esac
    done

    case $prev in
        --profile)
            COMPREPLY=($(compgen -W "$profiles $(_confine_profile_names)" -- "$cur"))
            compopt -o filenames
            COMPREPLY+=($(compgen -f -X '!*.toml' -- "$cur") $(compgen -d -- "$cur"))
            return
            ;;
        -w | --workspace | --tmpfs)
            _filedir -d
            return
            ;;
        --net)
            COMPREPLY=($(compgen -W 'none proxy veth host' -- "$cur"))
            return
            ;;
        --net-log | --report | --log | --ro | --rw | --mask | --device)
            _filedir
            return
            ;;
        --seccomp)
            _filedir '@(toml|json)'
            return
            ;;
        --pass-env)
            COMPREPLY=($(compgen -v -- "$cur"))
            return
            ;;
        --env)
            compopt -o nospace
            COMPREPLY=($(compgen -v -S = -- "$cur"))
            return
            ;;
        --user)
            COMPREPLY=($(compgen -u -- "$cur"))
            return
            ;;
        --require)
            local prefix=''
            [[ $cur == *,* ]] && prefix=${cur%,*},
            COMPREPLY=($(compgen -P "$prefix" -W 'namespaces landlock seccomp' -- "${cur##*,}"))
            return
            ;;
        --gpus)
            COMPREPLY=($(compgen -W 'all device=' -- "$cur"))
            return
            ;;
        --allow | --upstream-proxy | --secret | --for | --broker | --publish | --scan-skip | --scan-walk | --preserve-fd | --memory | --memory-swap | --pids | \
        --pids-limit | --cpus | --tmpfs-size | --shm-size | --status-fd | --worktree | --checkpoint-exclude)
            return
            ;;
    esac
    [[ $split == true ]] && return

    case $sub in
        probe)
            COMPREPLY=($(compgen -W '--json -h --help' -- "$cur"))
            ;;
        doctor)
            COMPREPLY=($(compgen -W "$sandbox_opts -h --help" -- "$cur"))
            ;;
        checkpoints)
            case $action in
                '') COMPREPLY=($(compgen -W 'list restore rm prune --json -w --workspace -h --help' -- "$cur")) ;;
                list) COMPREPLY=($(compgen -W '--json -w --workspace -h --help' -- "$cur")) ;;
                restore) COMPREPLY=($(compgen -W "latest $(_confine_checkpoint_ids) --force -w --workspace -h --help" -- "$cur")) ;;
                rm) COMPREPLY=($(compgen -W "latest $(_confine_checkpoint_ids) -w --workspace -h --help" -- "$cur")) ;;
                prune) [[ $prev == --keep ]] || COMPREPLY=($(compgen -W '--keep -w --workspace -h --help' -- "$cur")) ;;
            esac
            ;;
        learn)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$sandbox_opts -h --help --" -- "$cur"))
            else
                COMPREPLY=($(compgen -c -- "$cur"))
            fi
            ;;
        explain)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$sandbox_opts --json -h --help --" -- "$cur"))
            else
                COMPREPLY=($(compgen -c -- "$cur"))
            fi
            ;;
        *)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$sandbox_opts -v --verbose -q --quiet --version -h --help --" -- "$cur"))
            else
                COMPREPLY=($(compgen -W 'run probe explain doctor learn checkpoints' -- "$cur") $(compgen -c -- "$cur"))
            fi
            ;;
    esac
} &&
    complete -F _confine confine

# ex: filetype=sh
