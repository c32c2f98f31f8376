package local

import (
	"os/user"
	"strconv"
)

// The environment a step starts from. A step is untrusted code, and braid's
// own environment holds what no step may see: the BRAID_SECRET_* values of
// artifact credentials (internal/config/secrets.go), and whatever else the
// shell or service manager that started braid had (cloud credentials,
// tokens). So a step never inherits it. It starts from what a container
// image gives, PATH and HOME and nothing else; the container's env (with
// $(VAR) and fieldRef resolved by braid) and the ARGO_* variables of the
// run (ARGO_POD_NAME, ARGO_NODE_ID, ... from the engine's Launch.Env) go on
// top (step.go, hostCommand). A step on an image's root starts from the
// image's Env instead (image.go). The shell that binds a private /tmp and
// braid-nsinit, which run before the step's command, get the step's own
// environment and exec the command with it; the image shims are scripts
// that inherit it from the step.
//
// PATH is braid's own PATH, or defaultPath when braid has none. A step on
// the host's root runs the host's programs, and braid's PATH is where the
// host's user put them (/usr/local/go/bin, a virtualenv, ~/bin): replacing
// it with defaultPath would break steps that work in a shell, and a PATH
// names directories, not credentials.
//
// HOME is the home of the user the step runs as, as a container runtime
// sets it: /root when the step runs as root (braid is root, or the step is
// the root of a user namespace of its own, userns.go); otherwise the home
// of braid's user in the password database (not braid's $HOME), or "/"
// when it has no entry there, as Kubernetes does.

// baseEnviron is the environment a step on the host's root starts from:
// PATH (hostPath, or defaultPath when it is empty) and HOME for a step
// running as the user euid, or as root of a user namespace when inUserns.
func baseEnviron(hostPath string, euid int, inUserns bool) []string {
	if hostPath == "" {
		hostPath = defaultPath
	}
	return []string{"PATH=" + hostPath, "HOME=" + stepHome(euid, inUserns)}
}

// stepHome is HOME for a step running as euid (see baseEnviron).
func stepHome(euid int, inUserns bool) string {
	if euid == 0 || inUserns {
		return "/root"
	}
	u, err := user.LookupId(strconv.Itoa(euid))
	if err != nil || u.HomeDir == "" {
		return "/"
	}
	return u.HomeDir
}
