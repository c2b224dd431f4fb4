//go:build realkaas && unix

package realkaas

// The parts of kaasctl's JSON documents the scenarios read (kaasctl help
// formats lists them all).

type whoisRow struct {
	Key                string `json:"key"`
	Kind               string `json:"kind"`
	Coordinator        string `json:"coordinator"`
	Tier               string `json:"tier"`
	CurrentCoordinator string `json:"currentCoordinator"`
	ExplicitBroker     string `json:"explicitBroker"`
	IfLastToConnect    *struct {
		Broker      string `json:"broker"`
		Coordinator string `json:"coordinator"`
		Tier        string `json:"tier"`
	} `json:"ifLastToConnect"`
}

type listView struct {
	Groups []struct {
		Group               string `json:"group"`
		Coordinator         string `json:"coordinator"`
		Tier                string `json:"tier"`
		CommittedPartitions int    `json:"committedPartitions"`
		Issues              []string
		Live                *struct {
			State           string `json:"state"`
			Members         int    `json:"members"`
			WireCoordinator string `json:"wireCoordinator"`
		} `json:"live"`
	} `json:"groups"`
}

type offlineDescribe struct {
	Groups []struct {
		Group       string `json:"group"`
		Coordinator struct {
			Coordinator string `json:"coordinator"`
			Tier        string `json:"tier"`
		} `json:"coordinator"`
		LagSource  string `json:"lagSource"`
		Partitions []struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			Committed     int64  `json:"committed"`
			HighWatermark *int64 `json:"highWatermark"`
			Lag           *int64 `json:"lag"`
			LagNote       string `json:"lagNote"`
		} `json:"partitions"`
		TotalLag int64 `json:"totalLag"`
		LagKnown bool  `json:"lagKnown"`
	} `json:"groups"`
}

type liveDescribe struct {
	Groups []struct {
		Group       string `json:"group"`
		Coordinator struct {
			Coordinator string `json:"coordinator"`
			Tier        string `json:"tier"`
		} `json:"coordinator"`
		WireCoordinator   string `json:"wireCoordinator"`
		CoordinatorAgrees *bool  `json:"coordinatorAgrees"`
		State             string `json:"state"`
		Members           []struct {
			MemberID string `json:"memberId"`
			ClientID string `json:"clientId"`
		} `json:"members"`
		Partitions []struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			Committed     int64  `json:"committed"`
			FileCommitted *int64 `json:"fileCommitted"`
			LogEnd        int64  `json:"logEnd"`
			Lag           *int64 `json:"lag"`
		} `json:"partitions"`
		TotalLag int64 `json:"totalLag"`
	} `json:"groups"`
}

type resetView struct {
	Groups []struct {
		Group       string `json:"group"`
		State       string `json:"state"`
		Refused     string `json:"refused"`
		Error       string `json:"error"`
		TimeRefused bool   `json:"timeRefused"`
		Outcome     string `json:"outcome"`
		Executed    bool   `json:"executed"`
		Method      string `json:"method"`
		Warnings    []string
		Rows        []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Current   *int64 `json:"current"`
			New       int64  `json:"new"`
			Result    string `json:"result"`
			Detail    string `json:"detail"`
			Error     string `json:"error"`
			Warnings  []string
		} `json:"rows"`
	} `json:"groups"`
	Summary struct {
		Changed int `json:"changed"`
		Refused int `json:"refused"`
		Cached  int `json:"cached"`
		Failed  int `json:"failed"`
	} `json:"summary"`
}

type finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

type checkView struct {
	Findings []finding `json:"findings"`
}

type repairView struct {
	Actions []struct {
		Action string `json:"action"`
		Path   string `json:"path"`
		Group  string `json:"group"`
		Detail string `json:"detail"`
		Change bool   `json:"change"`
		Done   bool   `json:"done"`
	} `json:"actions"`
	Changes int `json:"changes"`
}

type diffView struct {
	Old struct {
		AssignmentVersion int64 `json:"assignmentVersion"`
	} `json:"old"`
	New struct {
		AssignmentVersion int64 `json:"assignmentVersion"`
	} `json:"new"`
	Failover bool `json:"failover"`
	Moves    []struct {
		Kind   string `json:"kind"`
		Key    string `json:"key"`
		From   string `json:"from"`
		To     string `json:"to"`
		ToTier string `json:"toTier"`
		Cause  string `json:"cause"`
	} `json:"moves"`
}

type traceView struct {
	Versions []struct {
		ControllerEpoch   int64    `json:"controllerEpoch"`
		AssignmentVersion int64    `json:"assignmentVersion"`
		Controller        string   `json:"controller"`
		Brokers           []string `json:"brokers"`
		Placements        []struct {
			Group       string `json:"group"`
			Coordinator string `json:"coordinator"`
			Tier        string `json:"tier"`
		} `json:"placements"`
	} `json:"versions"`
	Events []struct {
		Group             string `json:"group"`
		From              string `json:"from"`
		To                string `json:"to"`
		AssignmentVersion int64  `json:"assignmentVersion"`
		Cause             string `json:"cause"`
	} `json:"events"`
	Final []struct {
		Group       string `json:"group"`
		Coordinator string `json:"coordinator"`
		Tier        string `json:"tier"`
	} `json:"final"`
}

type healthView struct {
	Groups []struct {
		Group    string `json:"group"`
		State    string `json:"state"`
		Evidence []struct {
			State     string `json:"state"`
			Partition string `json:"partition"`
			Before    int64  `json:"before"`
			After     int64  `json:"after"`
		} `json:"evidence"`
	} `json:"groups"`
}
