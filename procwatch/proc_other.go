//go:build !linux

package procwatch

import (
	"errors"
	"runtime"
)

var errUnsupported = errors.New("watching a process reads Linux's /proc, which " + runtime.GOOS + " does not have: run llmreplay on the server's Linux machine, or leave --watch-pid out")

func procName(int) (string, error) { return "", errUnsupported }

func descendants(pid int) []int { return []int{pid} }

func readTree(int, []int) (own, sum usage, err error) { return own, sum, errUnsupported }
