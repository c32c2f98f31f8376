// Package supervisor keeps a machine's steps running while braid server is
// down: the containerd-shim and conmon division of work.
//
// One supervisor process runs per data directory (`braid supervisor`,
// started detached by the first braid server that needs it, in a session of
// its own). It owns the local runtime, so every step process is its child,
// not the server's: a server killed with SIGKILL leaves its steps running,
// and their results are journaled (the local runtime's index) and reported
// when a server connects again. The server talks to it over a unix socket
// of mode 0600 in the data directory (SocketPath), through a Client that is
// itself a runtime.Runtime; a step's start is one message, never a process
// start of its own.
//
// # The protocol
//
// One connection carries newline-delimited JSON: requests with a sequence
// number (hello, start, kill, status, shutdown), their replies, and the
// runtime's events, pushed with sequence 0. The hello names the supervisor's
// instance (a random ID per process) and version. Events that nobody is
// connected to receive wait in a bounded buffer; a server that connects
// also asks for the status of every step its stored workflows have in
// flight (the controller's recover), so an event is never the only record of
// a result.
//
// # When the supervisor itself is gone
//
// A supervisor killed with SIGKILL takes its steps with it (each step dies
// with the thread that forked it, and a PID namespace or cgroup takes its
// children). The Client notices the closed connection, starts a new
// supervisor and asks it for the status of every step it had in flight:
// the new one finds them started and never ended in the journal, and
// reports them Error with Argo's message for a vanished pod ("pod
// deleted"); the step's retryStrategy decides what follows. Only one
// supervisor runs per data directory: it holds an exclusive lock
// (supervisor.lock) for its life, and a second one exits at once. It exits
// by itself when no server has been connected and no step has run for its
// idle timeout, or when its data directory is removed.
//
// # Imports
//
// The runtime interface and the API types. The local runtime it serves is
// given by internal/app.
//
// # Must not import
//
// The local runtime's package (it serves any runtime.Runtime), the engine,
// the controller, a store, the server or the CLI.
package supervisor
