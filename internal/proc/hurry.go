package proc

import "sync"

var hurry struct {
	mu sync.Mutex
	ch chan struct{}
}

// hurried is closed by Hurry.
func hurried() <-chan struct{} {
	hurry.mu.Lock()
	defer hurry.mu.Unlock()
	if hurry.ch == nil {
		hurry.ch = make(chan struct{})
	}
	return hurry.ch
}

// Hurry is the user's second interrupt: every command stopped by its
// context and still within its grace period is killed now (SIGKILL to its
// group) instead of after the grace period. It holds for the rest of the
// process.
func Hurry() {
	hurried()
	hurry.mu.Lock()
	defer hurry.mu.Unlock()
	select {
	case <-hurry.ch:
	default:
		close(hurry.ch)
	}
}
