package mdtext

import "testing"

// GitLab finds references in rendered text: each sigil followed by what
// would make a reference gets a zero-width space; code, comments, entities
// and link destinations stay as they are.
func TestGitLab(t *testing.T) {
	const z = "\u200b"
	tests := []struct{ name, in, want string }{
		{"plain", "| a | 3% | b |\n", "| a | 3% | b |\n"},
		{"mention", "ping @octo", "ping @" + z + "octo"},
		{"escaped mention", "ping @&#8203;octo", "ping @&#8203;octo"},
		{"merge request", "see !45 and g/p!3", "see !" + z + "45 and g/p!" + z + "3"},
		{"label and milestone", `~bug ~"a b" %v1 %"m 2"`, "~" + z + "bug ~" + z + `"a b" %` + z + "v1 %" + z + `"m 2"`},
		{"snippet and epic", "$12 &amp;7 &3", "$" + z + "12 &amp;" + z + "7 &" + z + "3"},
		{"emoji", "x :tada: y", "x :" + z + "tada: y"},
		{"backslash escaped", `a\_b \~label`, `a\_b \~` + z + "label"},
		{"issue", "fixes #&#8203;12 and #9", "fixes #&#8203;12 and #" + z + "9"},
		{"entity kept", "&lt;img&gt; &#64;x", "&lt;img&gt; &#64;x"},
		{"code span kept", "`@x ~y` and `` a`!1 `` !2", "`@x ~y` and `` a`!1 `` !" + z + "2"},
		{"comment kept", "<!-- perfgate:gate=a -->", "<!-- perfgate:gate=a -->"},
		{"link destination kept", "[a · b](https://s.example/#x~1)", "[a · b](https://s.example/#x~1)"},
		{"quick action", "/merge\n  /approve now", z + "/merge\n  " + z + "/approve now"},
		{"toc", "[[_TOC_]]\n[TOC]\n", `\[[_TOC_]]` + "\n" + `\[TOC]` + "\n"},
		{"fenced code kept", "```\n@x !1\n```\n@y", "```\n@x !1\n```\n@" + z + "y"},
		{"crlf", "@a\r\n", "@" + z + "a\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GitLab(tt.in); got != tt.want {
				t.Errorf("GitLab(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}
