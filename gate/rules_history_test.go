package gate

import (
	"strings"
	"testing"
)

func TestRulesHistoryKeys(t *testing.T) {
	cfg, err := ParseRules(".perfgate.yml", []byte("db: postgres://perfgate@db.internal/perf\nrepository: github.com/org/engine\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB != "postgres://perfgate@db.internal/perf" || cfg.Repository != "github.com/org/engine" {
		t.Errorf("db, repository = %q, %q", cfg.DB, cfg.Repository)
	}
	for _, tt := range []struct{ in, want string }{
		{"db: postgres://perfgate:hunter2@db/perf\n", ".perfgate.yml:1: db holds a password"},
		{"db: postgres://perfgate@db/perf?password=hunter2\n", ".perfgate.yml:1: db holds a password"},
		{"repository: [a]\n", ".perfgate.yml:1: repository must be a name"},
		{"db: \"\"\n", ".perfgate.yml:1: db must be a history file"},
	} {
		_, err := ParseRules(".perfgate.yml", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", tt.in, err)
		}
	}
}
