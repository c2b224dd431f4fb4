//go:build !unix

package commands

func runningSandboxPID(string) int { return 0 }
