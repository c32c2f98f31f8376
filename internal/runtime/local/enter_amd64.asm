# The trampoline that starts a step when braid is root (enter.go), for
# x86-64. enter_amd64.bin is its machine code:
#
#	as -o enter.o enter_amd64.asm && objcopy -O binary -j .text enter.o enter_amd64.bin
#
# (TestEnterCodeIsSource checks that they agree.) braid appends to it the
# length of the seccomp program (2 bytes, then 6 of padding) and the
# program, at the label data, and runs it as root, vforked from the thread
# that built the step's view, with the view as its working directory, file
# descriptor 3 the steps' user namespace and 4 its error channel, and the
# arguments FLAGS WORKDIR COMMAND ARGS...: FLAGS[0] is p when the step is
# the init of a PID namespace of its own, whose /proc it mounts and masks
# (a missing path is skipped), FLAGS[1] s when it loads the seccomp
# program. It chroots into the view, changes to WORKDIR, joins the user
# namespace, becomes its root with no supplementary groups, sets the
# parent-death signal again (a change of uid clears it), sets
# no_new_privs, loads the program, and execs COMMAND. A failure writes the
# errno on descriptor 4 (which the exec closes otherwise) and exits 127.
.intel_syntax noprefix
.macro SYS nr
	mov eax, \nr
	syscall
.endm
.macro CHECK
	test rax, rax
	jnz fail
.endm
# mount(src, dst, src, flags, NULL); a missing path is skipped
.macro MOUNT src, dst, flags
	lea rdi, [rip + \src]
	lea rsi, [rip + \dst]
	mov rdx, rdi
	mov r10d, \flags
	xor r8d, r8d
	SYS 165
	cmp rax, -2
	je 1f
	CHECK
1:
.endm
.macro MASKFILE p
	MOUNT s_devnull, \p, 0x1000
.endm
.macro MASKDIR p
	MOUNT s_tmpfs, \p, 0xf
.endm
.macro READONLY p
	MOUNT \p, \p, 0x5000
	MOUNT \p, \p, 0x1021
.endm
.globl _start
_start:
	mov r15, rsp
	mov edi, 4
	mov esi, 2
	mov edx, 1
	SYS 72
	lea rdi, [rip + s_dot]
	SYS 161
	CHECK
	mov rbx, [r15 + 16]
	cmp byte ptr [rbx], 'p'
	jne 2f
	MOUNT s_proc, s_procdir, 0xe
	MASKFILE s_kcore
	MASKFILE s_keys
	MASKFILE s_latency
	MASKFILE s_timerlist
	MASKFILE s_timerstats
	MASKFILE s_schedd
	MASKDIR s_acpi
	MASKDIR s_asound
	MASKDIR s_scsi
	READONLY s_bus
	READONLY s_fs
	READONLY s_irq
	READONLY s_sys
	READONLY s_sysrq
2:
	mov rdi, [r15 + 24]
	SYS 80
	CHECK
	mov edi, 3
	mov esi, 0x10000000
	SYS 308
	CHECK
	mov edi, 3
	SYS 3
	xor edi, edi
	xor esi, esi
	SYS 116
	CHECK
	xor edi, edi
	xor esi, esi
	xor edx, edx
	SYS 119
	CHECK
	xor edi, edi
	xor esi, esi
	xor edx, edx
	SYS 117
	CHECK
	mov edi, 1
	mov esi, 9
	SYS 157
	cmp byte ptr [rbx + 1], 's'
	jne 3f
	mov edi, 38
	mov esi, 1
	xor edx, edx
	xor r10d, r10d
	xor r8d, r8d
	SYS 157
	CHECK
	movzx eax, word ptr [rip + data]
	mov [rsp - 16], rax
	lea rax, [rip + data + 8]
	mov [rsp - 8], rax
	mov edi, 22
	mov esi, 2
	lea rdx, [rsp - 16]
	SYS 157
	CHECK
3:
	mov rcx, [r15]
	mov rdi, [r15 + 32]
	lea rsi, [r15 + 32]
	lea rdx, [r15 + rcx*8 + 16]
	SYS 59
fail:
	neg eax
	mov [rsp - 4], eax
	mov edi, 4
	lea rsi, [rsp - 4]
	mov edx, 4
	SYS 1
	mov edi, 127
	SYS 231
s_dot: .asciz "."
s_devnull: .asciz "/dev/null"
s_tmpfs: .asciz "tmpfs"
s_proc: .asciz "proc"
s_procdir: .asciz "/proc"
s_kcore: .asciz "/proc/kcore"
s_keys: .asciz "/proc/keys"
s_latency: .asciz "/proc/latency_stats"
s_timerlist: .asciz "/proc/timer_list"
s_timerstats: .asciz "/proc/timer_stats"
s_schedd: .asciz "/proc/sched_debug"
s_acpi: .asciz "/proc/acpi"
s_asound: .asciz "/proc/asound"
s_scsi: .asciz "/proc/scsi"
s_bus: .asciz "/proc/bus"
s_fs: .asciz "/proc/fs"
s_irq: .asciz "/proc/irq"
s_sys: .asciz "/proc/sys"
s_sysrq: .asciz "/proc/sysrq-trigger"
.balign 8
data:

