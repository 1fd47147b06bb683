package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

func init() {
	commandSet = append(commandSet, completionCommand, manCommand)
	examples["completion"] = `
perfgate completion bash > /etc/bash_completion.d/perfgate   # or, for this shell: source <(perfgate completion bash)
perfgate completion zsh > "${fpath[1]}/_perfgate"
perfgate completion fish > ~/.config/fish/completions/perfgate.fish`
	examples["man"] = `
perfgate man > perfgate.1 && man ./perfgate.1`
}

// The bash and zsh scripts ask perfgate for the candidates
// (urfave/cli's --generate-bash-completion) and run the words typed so far
// as an argument list: nothing on the command line is evaluated by eval.
const bashCompletion = `# bash completion for perfgate: source <(perfgate completion bash)
_perfgate_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" opts
  local words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _perfgate_complete perfgate
`

const zshCompletion = `#compdef perfgate
# zsh completion for perfgate: perfgate completion zsh > "${fpath[1]}/_perfgate"
_perfgate() {
  local -a opts
  local cur=${words[CURRENT]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[1,CURRENT-1]} "$cur" --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[1,CURRENT-1]} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'perfgate' opts
  else
    _files
  fi
}
if [[ "$funcstack[1]" == "_perfgate" ]]; then
  _perfgate "$@"
else
  compdef _perfgate perfgate
fi
`

var completionShells = []string{"bash", "zsh", "fish"}

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		UsageText: "perfgate completion bash|zsh|fish",
		Description: "Install the script where the shell looks for completions, or load it in this shell.\n" +
			"The release archives carry the three scripts under completions/.",
		BashComplete: func(c *cli.Context) {
			if c.NArg() == 0 {
				fmt.Fprintln(c.App.Writer, strings.Join(completionShells, "\n"))
			}
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("completion takes one shell, got %d arguments; choose one of: %s (see perfgate completion --help)", c.NArg(), strings.Join(completionShells, ", "))
			}
			return writeCompletion(e.stdout, c.App, c.Args().First())
		},
	}
}

func writeCompletion(w io.Writer, app *cli.App, shell string) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(w, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(w, zshCompletion)
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return fmt.Errorf("completion fish: %w", err)
		}
		_, err = io.WriteString(w, s)
		return err
	}
	return usageErrorf("completion: shell %q is not supported; choose one of: %s", shell, strings.Join(completionShells, ", "))
}

func manCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print perfgate's man page (roff)",
		UsageText: "perfgate man > perfgate.1",
		Description: "The page lists every command and flag, as --help does; the release archives carry it\n" +
			"as manpages/perfgate.1.gz.",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("man takes no arguments (see perfgate man --help)")
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return fmt.Errorf("man: %w", err)
			}
			_, err = io.WriteString(e.stdout, page+manExitStatus)
			return err
		},
	}
}

// manExitStatus is the man page's EXIT STATUS section: the codes of
// exitCode (app.go) and of bisect.
const manExitStatus = `.SH EXIT STATUS
.TP
.B 0
success; for check and ab, the gate passed (or was inconclusive, unless the rules say inconclusive: fail)
.TP
.B 1
the gate failed: a regression (check, ab, run --repeat auto)
.TP
.B 2
bad input or usage: a flag, a rules file, a revision typed, unreadable benchmark output
.TP
.B 3
the environment: git, a locked or damaged history, a base branch missing from the clone, a commit with no stored results, GitHub unreachable
.TP
.B 4, 5, 6
bisect only: good and bad do not differ (4), the budget ran out before a single commit (5), nothing was testable (6)
`
