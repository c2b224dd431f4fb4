package wire

import "context"

// DescribeOnCoordinators finds the groups' coordinators (one batched
// FindCoordinator) and describes each group on its own coordinator: the
// coordinator answers (a failed lookup has Err set) and the descriptions.
// It fails only when FindCoordinator cannot be sent at all.
func (c *Client) DescribeOnCoordinators(ctx context.Context, groups []string) (map[string]Coordinator, []DescribedGroup, error) {
	coords, err := c.FindCoordinators(ctx, groups, false)
	if err != nil {
		return nil, nil, err
	}
	return coords, c.DescribeGroups(ctx, groups, coords), nil
}
