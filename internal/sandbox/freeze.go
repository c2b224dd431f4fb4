package sandbox

import "fmt"

// FreezeBroker models a broker process stopped by SIGSTOP (or a VM
// paused): its listener still accepts connections (the kernel queues
// them) but no request is answered until it is thawed, when the requests
// read meanwhile are answered in order, as a SIGCONT'd broker does. The
// controller keeps listing it alive (kaas's Go controller never removed a
// frozen broker from assignment.json in the lab: 2 m 44 s, no new
// version), so its groups cannot commit and FindCoordinator still names
// it.
func (s *Sandbox) FreezeBroker(id string, on bool) error {
	if _, err := s.lookup(id); err != nil {
		return err
	}
	if on {
		s.frozen.LoadOrStore(id, make(chan struct{}))
		return nil
	}
	if v, ok := s.frozen.LoadAndDelete(id); ok {
		close(v.(chan struct{}))
	}
	return nil
}

// waitThawed holds a request to broker b while b is frozen; false when
// the connection died meanwhile.
func (s *Sandbox) waitThawed(b *broker, dead <-chan struct{}) bool {
	v, ok := s.frozen.Load(b.id)
	if !ok {
		return true
	}
	select {
	case <-v.(chan struct{}):
		return true
	case <-dead:
		return false
	}
}

// freezeCommand is the console's "freeze kaas-N" and "thaw kaas-N".
func (s *Sandbox) freezeCommand(verb string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("usage: %s kaas-N", verb)
	}
	if err := s.FreezeBroker(args[0], verb == "freeze"); err != nil {
		return "", err
	}
	if verb == "freeze" {
		return args[0] + " frozen: connections are accepted, nothing is answered until 'thaw " + args[0] + "'; assignment.json still lists it alive", nil
	}
	return args[0] + " thawed: the requests it read meanwhile are answered now", nil
}
