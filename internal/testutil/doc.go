// Package testutil holds what the module's tests share to wait for an
// event without a fixed sleep.
//
// # What it owns
//
//   - Poll and Eventually: call a condition at once and then every few
//     milliseconds (the gap grows from 5 ms to 100 ms, so that a quick
//     event is seen quickly and a long wait costs little) until it holds or
//     a deadline passes; Eventually fails the test with the condition's last
//     error. PollEvery keeps a fixed gap, for a condition that must be seen
//     soon after it starts to hold.
//
// A wait for time to pass (a timer, a TTL, a backoff) is not polled: the
// code under test takes a k8s.io/utils/clock.Clock and the test moves a
// k8s.io/utils/clock/testing.FakeClock.
//
// # What it must not import
//
// Only the standard library: every test may import it, and no non-test
// code does.
package testutil
