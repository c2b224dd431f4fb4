package views

// The document of kaasctl --help-json: the command tree as data.

// HelpTree is the document --help-json prints.
type HelpTree struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Usage       string `json:"usage"`
	Description string `json:"description"`
	// Path is the subtree asked for ("" for the whole tree).
	Path          string            `json:"path"`
	ExitCodes     []ExitCodeDoc     `json:"exitCodes"`
	OutputFormats []OutputFormatDoc `json:"outputFormats"`
	// Environment is every variable kaasctl reads, with the flag it stands for.
	Environment []HelpEnv     `json:"environment"`
	Commands    []HelpCommand `json:"commands"`
}

// HelpEnv is one environment variable.
type HelpEnv struct {
	Name string `json:"name"`
	// Flag is the flag it stands in for ("" when none).
	Flag  string `json:"flag"`
	Usage string `json:"usage"`
}

// HelpCommand is one command of the tree.
type HelpCommand struct {
	Name string `json:"name"`
	// Path is the command line that runs it ("groups describe").
	Path        string   `json:"path"`
	Aliases     []string `json:"aliases"`
	Usage       string   `json:"usage"`
	ArgsUsage   string   `json:"argsUsage"`
	Description string   `json:"description"`
	Hidden      bool     `json:"hidden"`
	// Runnable: a leaf that does work (a parent only chooses a sub-command).
	Runnable bool       `json:"runnable"`
	Flags    []HelpFlag `json:"flags"`
	// ExitCodes are the codes it can end with (exitCodes says what each means).
	ExitCodes []int `json:"exitCodes"`
	// OutputFormats are the -o values it takes; Documents the machine
	// documents it prints.
	OutputFormats []string       `json:"outputFormats"`
	Documents     []HelpDocument `json:"documents"`
	Subcommands   []HelpCommand  `json:"subcommands"`
}

// HelpFlag is one flag of a command.
type HelpFlag struct {
	Name    string   `json:"name"`
	Aliases []string `json:"aliases"`
	// Type is bool, string, int, duration (internal/when's grammar) or
	// stringList (repeatable, or comma separated).
	Type        string `json:"type"`
	TakesValue  bool   `json:"takesValue"`
	Repeatable  bool   `json:"repeatable"`
	Default     string `json:"default"`
	Placeholder string `json:"placeholder"`
	Usage       string `json:"usage"`
	Category    string `json:"category"`
	// Hidden flags are accepted without being listed in the help (the
	// connection flags of offline commands).
	Hidden bool `json:"hidden"`
	// Common: one of the flags every command takes (--data-dir, -o, --brokers, ...).
	Common bool `json:"common"`
	// Env are the environment variables that set it, ProfileKey where a
	// profile of config.yaml holds it; a flag beats its variable, which
	// beats the profile.
	Env        []string `json:"env"`
	ProfileKey string   `json:"profileKey"`
}

// HelpDocument is a machine document a command prints.
type HelpDocument struct {
	Name          string `json:"name"`
	SchemaVersion int    `json:"schemaVersion"`
	JSONL         string `json:"jsonl"`
}

// OutputFormatDoc is one -o format.
type OutputFormatDoc struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Machine     bool   `json:"machine"`
}

// ExitCodeDoc is one exit code: what 'kaasctl help exit-codes' says of
// it, and --help-json lists.
type ExitCodeDoc struct {
	Code int    `json:"code"`
	Name string `json:"name"`
	// title opens the help page's paragraph.
	Title   string `json:"-"`
	Meaning string `json:"meaning"`
}
