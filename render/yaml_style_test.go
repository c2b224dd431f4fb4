package render

import (
	"bytes"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestYAMLBlockStyleKeepsTypes(t *testing.T) {
	v := map[string]any{"s": "true", "n": "007", "list": []string{"a: b", ""}, "num": 3, "nested": map[string]any{"x": nil}}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "{") || strings.Contains(buf.String(), `"list"`) {
		t.Errorf("flow style or quoted keys left:\n%s", buf.String())
	}
	var back map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back["s"] != "true" || back["n"] != "007" || back["num"] != 3 {
		t.Errorf("types changed: %#v\n%s", back, buf.String())
	}
	if l := back["list"].([]any); l[0] != "a: b" || l[1] != "" {
		t.Errorf("list %#v", l)
	}
}
