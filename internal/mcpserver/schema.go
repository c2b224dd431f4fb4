package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// Output is every tool's structured result: the command it ran, how it
// ended, what it said on stderr, and its document.
type Output struct {
	Tool string `json:"tool"`
	// Command is the kaasctl command line the call ran, as a person would
	// type it (the server's volume and connection flags included).
	Command string `json:"command"`
	// ExitCode is the command's exit code (0 ok, 3 problems found);
	// Outcome its meaning.
	ExitCode int    `json:"exitCode"`
	Outcome  string `json:"outcome"`
	// Notes are the notes and warnings the command wrote on stderr.
	Notes []string `json:"notes"`
	// Execute is, for a plan, the command that applies it: for a person
	// to run; the server never does.
	Execute string `json:"execute,omitempty"`
	// Result is the command's JSON document (-o json), with its
	// schemaVersion.
	Result json.RawMessage `json:"result"`
}

// InputSchema is the schema of a tool's typed arguments (a struct type):
// its json fields, described by their jsonschema tags; unknown arguments
// are refused.
func InputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("tool arguments of type %s are not an object", t)
	}
	return s, nil
}

// DocumentSchema is the schema of a kaasctl document of type t: its
// fields as the JSON has them, schemaVersion first (at version), and
// open to fields it does not list (an id that is not UTF-8 gets a
// ...Base64 sibling).
func DocumentSchema(t reflect.Type, version int) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return nil, err
	}
	open(s, 0)
	return versioned(s, version)
}

// AddMember declares a member the printer adds to every object of a
// document (as schemaVersion is), of type t, required.
func AddMember(s *jsonschema.Schema, name string, t reflect.Type, description string) error {
	m, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return err
	}
	open(m, 0)
	m.Description = description
	obj := s
	if s.Type != "object" && s.Items != nil && s.Items.Type == "object" {
		obj = s.Items
	}
	if obj.Type != "object" {
		return nil
	}
	if obj.Properties == nil {
		obj.Properties = map[string]*jsonschema.Schema{}
	}
	obj.Properties[name] = m
	obj.Required = append(obj.Required, name)
	if len(obj.PropertyOrder) > 0 && obj.PropertyOrder[0] == "schemaVersion" {
		obj.PropertyOrder = append([]string{"schemaVersion", name}, obj.PropertyOrder[1:]...)
	}
	return nil
}

// versioned adds the schemaVersion member to s.
func versioned(s *jsonschema.Schema, version int) (*jsonschema.Schema, error) {
	v := float64(version)
	sv := &jsonschema.Schema{Type: "integer", Const: jsonschema.Ptr[any](v), Description: "the document's schema version"}
	switch {
	case s.Type == "object":
		s.Properties["schemaVersion"] = sv
		s.Required = append(s.Required, "schemaVersion")
		s.PropertyOrder = append([]string{"schemaVersion"}, s.PropertyOrder...)
	case s.Items != nil && s.Items.Type == "object":
		s.Items.Properties["schemaVersion"] = sv
		s.Items.Required = append(s.Items.Required, "schemaVersion")
	}
	return s, nil
}

// open lets every object of s carry fields it does not list.
func open(s *jsonschema.Schema, depth int) {
	if s == nil || depth > 64 {
		return
	}
	if a := s.AdditionalProperties; a != nil && a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		open(p, depth+1)
	}
	open(s.Items, depth+1)
	open(s.AdditionalProperties, depth+1)
	for _, d := range s.Defs {
		open(d, depth+1)
	}
}

// OutputSchema is the schema of Output with doc as its result.
func OutputSchema(doc *jsonschema.Schema, plan bool) *jsonschema.Schema {
	str := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: d} }
	props := map[string]*jsonschema.Schema{
		"tool":     str("the tool called"),
		"command":  str("the kaasctl command line the call ran"),
		"exitCode": {Type: "integer", Description: "the command's exit code: 0 ok, 3 problems found"},
		"outcome":  {Type: "string", Enum: []any{"ok", "problems"}, Description: "the exit code's meaning"},
		"notes":    {Type: "array", Items: str(""), Description: "the notes and warnings the command wrote on stderr"},
		"result":   doc,
	}
	order := []string{"tool", "command", "exitCode", "outcome", "notes"}
	req := []string{"tool", "command", "exitCode", "outcome", "notes", "result"}
	if plan {
		props["execute"] = str("the command that applies this plan, for a person to run (this server never writes)")
		order, req = append(order, "execute"), append(req, "execute")
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: req, PropertyOrder: append(order, "result")}
}
