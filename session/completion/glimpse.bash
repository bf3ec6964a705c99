# bash completion for glimpse(1)                         -*- shell-script -*-
#
# Everything is asked of glimpse itself, so the completion follows the
# program: the commands from `glimpse --help`, each command's options and
# the kind of each argument from `glimpse COMMAND --help` (ID, PROFILE,
# DESKTOP-ID, FILE, PATH, COMMAND), sandbox ids from `glimpse list --ids`,
# profiles from `glimpse profiles`, a sandbox's desktop ids from
# `glimpse apps ID`, its repositories from `glimpse repos ID`.  Needs no
# bash-completion helper functions.

# The glimpse to ask: the one being completed when it was given by path.
_glimpse_prog ()
{
    local p=${COMP_WORDS[0]}
    if [[ $p == */* && -x $p ]]; then printf '%s\n' "$p"; else printf 'glimpse\n'; fi
}

_glimpse_commands ()
{
    "$1" --help 2>/dev/null | awk '/^Commands:/ { c = 1; next }
        c && /^  [^ ]/ { print $1 } c && /^$/ { exit }'
}

# The words of `glimpse CMD --help`'s usage line after "glimpse CMD".
_glimpse_usage ()
{
    "$1" "$2" --help 2>/dev/null | awk -v cmd="$2" '
        /^Usage:/ { u = 1; next }
        u { for (i = 1; i <= NF; i++) if ($i == cmd) break
            for (i++; i <= NF; i++) print $i
            exit }'
}

# Options of `glimpse CMD --help`, one a line, "--name=" for those taking a value.
_glimpse_options ()
{
    "$1" "$2" --help 2>/dev/null | sed -n 's/^ \{1,\}\(-[A-Za-z0-9], \)\{0,1\}\(--[A-Za-z0-9-]*=\{0,1\}\).*/\2/p'
}

# The value name of option $3 of command $2 ("FILE" for --image=FILE), if any.
_glimpse_option_arg ()
{
    "$1" "$2" --help 2>/dev/null | sed -n "s/^ \{1,\}\(-[A-Za-z0-9], \)\{0,1\}$3=\([^ ]*\).*/\2/p"
}

_glimpse_ids ()
{
    "$1" list --ids 2>/dev/null
}

_glimpse_profiles ()
{
    "$1" profiles 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_glimpse_repos ()
{
    "$1" repos "$2" 2>/dev/null | awk '{ print $1 }'
}

_glimpse_desktop_ids ()
{
    "$1" apps "$2" 2>/dev/null | cut -c3- | cut -f1
}

# COMPREPLY for a value of kind $2 ($3: the sandbox id given so far).
_glimpse_complete_kind ()
{
    local prog=$1 kind=$2 id=$3 cur=$4
    case $kind in
        ID)         COMPREPLY=($(compgen -W "$(_glimpse_ids "$prog")" -- "$cur")) ;;
        PROFILE)    COMPREPLY=($(compgen -W "$(_glimpse_profiles "$prog")" -- "$cur")) ;;
        DESKTOP-ID) [[ -n $id ]] &&
                    COMPREPLY=($(compgen -W "$(_glimpse_desktop_ids "$prog" "$id")" -- "$cur")) ;;
        REPO)       [[ -n $id ]] &&
                    COMPREPLY=($(compgen -W "$(_glimpse_repos "$prog" "$id")" -- "$cur")) ;;
        COMMAND)    COMPREPLY=($(compgen -c -- "$cur")) ;;
        FILE|PATH|ARG|FILE\|URL)
                    compopt -o filenames 2>/dev/null
                    COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}

_glimpse ()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local prog cmd i word
    COMPREPLY=()
    prog=$(_glimpse_prog)

    if (( COMP_CWORD == 1 )); then
        COMPREPLY=($(compgen -W "$(_glimpse_commands "$prog") --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}

    # The positional arguments the usage line names, [--name VALUE] groups left out.
    local -a kinds=() repeat=()
    local skip=0
    for word in $(_glimpse_usage "$prog" "$cmd"); do
        if (( skip )); then [[ $word == *] ]] && skip=0; continue; fi
        case $word in
            '[OPTION…]'|'[OPTION...]'|'[--]') continue ;;
            '[--'*) [[ $word == *] ]] || skip=1; continue ;;
        esac
        word=${word//[\[\]]/}
        if [[ $word == *… || $word == *... ]]; then
            word=${word%…}; word=${word%...}; kinds+=("$word"); repeat+=(1)
        else
            kinds+=("$word"); repeat+=(0)
        fi
    done

    # A value of the option before the cursor ("--image FILE" or "--image=FILE").
    local opt=
    if [[ $prev == --* ]]; then opt=$prev
    elif [[ $prev == = && ${COMP_WORDS[COMP_CWORD-2]} == --* ]]; then opt=${COMP_WORDS[COMP_CWORD-2]}
    fi

    # Which positional the cursor is at, and the sandbox id given so far.
    local n=0 id= endopts=0 takes
    for (( i = 2; i < COMP_CWORD; i++ )); do
        word=${COMP_WORDS[i]}
        if (( !endopts )) && [[ $word == -- ]]; then endopts=1; continue; fi
        if (( !endopts )) && [[ $word == -* || $word == = ]]; then
            continue
        fi
        # the value of an option that takes one
        if (( !endopts )) && [[ ${COMP_WORDS[i-1]} == --* && ${COMP_WORDS[i-1]} != -- ]] &&
           [[ -n $(_glimpse_option_arg "$prog" "$cmd" "${COMP_WORDS[i-1]}") ]]; then
            continue
        fi
        if (( !endopts )) && [[ ${COMP_WORDS[i-1]} == = ]]; then continue; fi
        [[ -z $id && ${kinds[n]} == ID ]] && id=$word
        n=$((n + 1))
    done

    if [[ -n $opt ]] && takes=$(_glimpse_option_arg "$prog" "$cmd" "$opt") && [[ -n $takes ]]; then
        [[ $takes == ID ]] && return   # a new id (create --name): nothing to offer
        _glimpse_complete_kind "$prog" "$takes" "$id" "$cur"
        return
    fi
    if [[ $cur == -* ]] && (( !endopts )); then
        COMPREPLY=($(compgen -W "$(_glimpse_options "$prog" "$cmd")" -- "$cur"))
        [[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
        return
    fi

    local kind=
    if (( n < ${#kinds[@]} )); then kind=${kinds[n]}
    elif (( ${#kinds[@]} )) && [[ ${repeat[${#kinds[@]}-1]} == 1 ]]; then kind=${kinds[${#kinds[@]}-1]}
    fi
    # NAME: profile names of glimpse profiles, repositories of remove-repo
    [[ $cmd == profiles && $kind == NAME ]] && kind=PROFILE
    [[ $cmd == remove-repo && $kind == NAME ]] && kind=REPO
    _glimpse_complete_kind "$prog" "$kind" "$id" "$cur"
}
complete -F _glimpse glimpse
