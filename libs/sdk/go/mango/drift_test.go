package mango

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed generated/ package must be exactly what tools/sdk/generate.sh makes from openapi.yaml.
func TestGeneratedCodeMatchesOpenAPI(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "tools/sdk/generate.sh"), "--check", "go")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generated code drifted from openapi.yaml (%v):\n%s", err, out)
	}
}
