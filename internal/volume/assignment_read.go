package volume

import "sync"

// AssignmentRead is one assignment file read by ReadAssignments.
type AssignmentRead struct {
	Assignment *Assignment
	Findings   []Finding
}

// ReadAssignments reads and parses several assignment files at once (with
// 100,000 entries the JSON decoding is most of the work), as
// ReadAssignment does each. The error is that of the first path, in the
// order given, that could not be read.
func ReadAssignments(paths ...string) ([]AssignmentRead, error) {
	out := make([]AssignmentRead, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].Assignment, out[i].Findings, errs[i] = ReadAssignment(p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
