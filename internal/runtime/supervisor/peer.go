package supervisor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// samePeer checks that the other end of a unix connection runs as this
// process's user: the socket's mode keeps others out, and this keeps out
// a socket someone else put in its place.
func samePeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("the peer's credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", cred.Uid, os.Geteuid())
	}
	return nil
}

// privateDir checks that dir, which holds the socket when the data
// directory's path is too long for it, is a directory of this user's only
// (not a link, not another user's).
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() || info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s must be a directory of uid %d only (mode 0700)", dir, os.Geteuid())
	}
	return nil
}
