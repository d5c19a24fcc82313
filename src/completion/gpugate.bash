# shellcheck shell=bash
# bash completion for gpugate(1); installed as
# /usr/share/bash-completion/completions/gpugate (bash-completion loads it on
# the first <Tab> after "gpugate"). Needs bash-completion's _init_completion.
# Check ids and profile names come from `gpugate list`, so they follow the
# binary being completed; options follow the getopt tables in src/main.c,
# src/hf/hf_cmd.c, src/provision/*.c and src/operator/*.c.

# Words of `gpugate list` under its "checks:" (ids) or "profiles" (names)
# heading: the first word of each indented line.
_gpugate_list()
{
	local prog=$1 section=$2
	"$prog" list 2>/dev/null | awk -v want="$section" '
		/^[^ ]/ { in_section = index($0, want) == 1; next }
		in_section && /^  [^ ]/ { print $1 }'
}

_gpugate()
{
	local cur prev words cword
	# -s: --opt=value gives prev=--opt, cur=value; -n :: readline splits
	# words at ':' (COMP_WORDBREAKS), so FORMAT:FILE is put back together
	_init_completion -s -n : || return

	# the program as typed, so a build tree's binary lists its own checks
	local prog=${words[0]}
	command -v -- "$prog" >/dev/null 2>&1 || prog=gpugate

	# the subcommand: the first word that names one; `check` when none does
	local cmd=check sub="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		check | list | hf | stack | bundle | spec | diff | serve)
			cmd=${words[i]}
			[[ $cmd == check || $cmd == serve ]] || {
				[[ $((i + 1)) -lt $cword ]] && sub=${words[i + 1]}
			}
			break
			;;
		esac
	done

	# the value of an option that takes one
	case $prev in
	--profile)
		mapfile -t COMPREPLY < <(compgen -W "$(_gpugate_list "$prog" profiles)" -- "$cur")
		return
		;;
	--only | --skip)
		# comma-separated ids or id prefixes: complete the last one
		local ids done_part="" last=$cur
		ids=$(_gpugate_list "$prog" checks)
		# the groups are prefixes too (runtime, hf)
		ids+=" $(printf '%s\n' $ids | cut -d. -f1 | sort -u)"
		if [[ $cur == *,* ]]; then
			done_part=${cur%,*},
			last=${cur##*,}
		fi
		mapfile -t COMPREPLY < <(compgen -P "$done_part" -W "$ids" -- "$last")
		compopt -o nospace 2>/dev/null
		return
		;;
	--format)
		if [[ $cmd == diff ]]; then
			mapfile -t COMPREPLY < <(compgen -W "text json markdown" -- "$cur")
		elif [[ $cmd == hf ]]; then
			mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "text json junit prom github nfd" -- "$cur")
		fi
		return
		;;
	--report)
		if [[ $cur != *:* ]]; then
			mapfile -t COMPREPLY < <(compgen -S : -W "text json junit prom github nfd" -- "$cur")
			compopt -o nospace 2>/dev/null
		else
			# FORMAT:FILE: complete the file after the colon
			local format=${cur%%:*} whole=$cur
			cur=${cur#*:}
			_filedir
			COMPREPLY=("${COMPREPLY[@]/#/$format:}")
			# readline replaces only the text after the last ':'
			__ltrim_colon_completions "$whole"
		fi
		return
		;;
	--vendor)
		mapfile -t COMPREPLY < <(compgen -W "intel nvidia" -- "$cur")
		return
		;;
	--backend)
		mapfile -t COMPREPLY < <(compgen -W "auto level-zero cuda" -- "$cur")
		return
		;;
	--repo-type)
		mapfile -t COMPREPLY < <(compgen -W "model dataset space" -- "$cur")
		return
		;;
	--spec)
		_filedir '@(yaml|yml)'
		return
		;;
	--manifest | -o | --output)
		_filedir
		return
		;;
	--root | --cache | --cache-dir | --dest)
		_filedir -d
		return
		;;
	--deadline | --nfd-prefix | --jobs | --timeout | --idle-timeout | --tolerance | --listen | --interval)
		return # a value only the user knows
		;;
	esac

	# --color=WHEN (split on = by _init_completion -s)
	if [[ $prev == --color ]]; then
		mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
		return
	fi

	local opts="" words_here=""
	case $cmd in
	check)
		opts="--profile --spec --vendor --root --format --report --deadline --only --skip
		      --quiet --verbose --color= --nfd-prefix --no-sandbox --help --version"
		# the first word may also be a subcommand
		[[ $cword -eq 1 ]] && words_here="check list hf stack bundle spec diff serve"
		;;
	serve)
		# its own two options, then those of check, which it runs
		opts="--listen --interval --profile --spec --vendor --root --report --deadline --only --skip
		      --nfd-prefix --no-sandbox --help"
		;;
	list)
		opts="--spec-keys"
		;;
	hf)
		case $sub in
		"") words_here="where scan verify fetch" ;;
		where) opts="--format --root --verbose --help" ;;
		scan) opts="--format --root --cache --help" ;;
		verify) opts="--format --root --cache --jobs --full --deadline --quiet --help" ;;
		fetch) opts="--repo-type --cache-dir --jobs --quiet --timeout --idle-timeout --help" ;;
		esac
		;;
	stack)
		if [[ -z $sub ]]; then
			words_here="fetch verify"
		else
			opts="--manifest --dest --allow-unpinned --jobs"
		fi
		;;
	bundle)
		opts="--output --spec --profile --backend --with-cmdline --help"
		;;
	spec)
		if [[ -z $sub ]]; then
			words_here="freeze"
		else
			opts="--profile --spec --vendor --root --output --floor --with-baselines --help"
		fi
		;;
	diff)
		if [[ $cur == -* ]]; then
			opts="--format --tolerance --help"
		else
			_filedir json
			return
		fi
		;;
	esac

	if [[ $cur == -* || -z $words_here ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		[[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
	else
		mapfile -t COMPREPLY < <(compgen -W "$words_here" -- "$cur")
	fi
}
complete -F _gpugate gpugate
