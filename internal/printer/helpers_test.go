package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 seconds"},
		{999 * time.Millisecond, "0 seconds"},
		{time.Second, "1 second"},
		{1999 * time.Millisecond, "1 second"},
		{20 * time.Second, "20 seconds"},
		{59*time.Second + 999*time.Millisecond, "59 seconds"},
		{-20 * time.Second, "20 seconds"},
		{-5 * time.Minute, "5 minutes"},
		{time.Minute, "1 minute 0 seconds"},
		{time.Minute + time.Second, "1 minute 1 seconds"},
		{90 * time.Second, "1 minute 30 seconds"},
		{16*time.Minute + 5*time.Second, "16 minutes 5 seconds"},
		{59*time.Minute + 59*time.Second, "59 minutes 59 seconds"},
		{time.Hour, "1 hour 0 minutes"},
		{time.Hour + 59*time.Minute + 59*time.Second, "1 hour 59 minutes"},
		{3*time.Hour + 65*time.Second, "3 hours 1 minutes"},
		{24 * time.Hour, "1 day 0 hours"},
		{50 * time.Hour, "2 days 2 hours"},
		{7 * 24 * time.Hour, "1 week 0 hours"},
		{15*24*time.Hour + 5*time.Hour, "2 weeks 5 hours"},
		{45 * 24 * time.Hour, "1 month 0 hours"},
		{100 * 24 * time.Hour, "3 months 0 hours"},
		{400 * 24 * time.Hour, "1 year 0 hours"},
		{600 * 24 * time.Hour, "2 years 0 hours"},
		{3 * 360 * 24 * time.Hour, "3 years 0 hours"},
		{40 * 360 * 24 * time.Hour, "a long while 0 hours"},
	}
	for _, tt := range tests {
		if got := HumanDuration(tt.d); got != tt.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{999 * time.Millisecond, "0s"},
		{time.Second, "1s"},
		{7 * time.Second, "7s"},
		{59 * time.Second, "59s"},
		{-7 * time.Second, "7s"},
		{time.Minute, "1m"},
		{119 * time.Second, "1m"},
		{15*time.Minute + 50*time.Second, "15m"},
		{59 * time.Minute, "59m"},
		{time.Hour, "1h"},
		{3*time.Hour + 59*time.Minute, "3h"},
		{23 * time.Hour, "23h"},
		{24 * time.Hour, "1d"},
		{47 * time.Hour, "1d"},
		{2 * 24 * time.Hour, "2d"},
		{400 * 24 * time.Hour, "400d"},
	}
	for _, tt := range tests {
		if got := ShortDuration(tt.d); got != tt.want {
			t.Errorf("ShortDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		then time.Time
		want string
	}{
		{nowAt(16 * time.Minute), "Mon Nov 30 09:16:00 +0000 (now)"},
		{nowAt(16*time.Minute - 999*time.Millisecond), "Mon Nov 30 09:15:59 +0000 (now)"},
		{nowAt(15 * time.Minute), "Mon Nov 30 09:15:00 +0000 (1 minute ago)"},
		{t0, "Mon Nov 30 09:00:00 +0000 (16 minutes ago)"},
		{nowAt(-5 * 24 * time.Hour), "Wed Nov 25 09:00:00 +0000 (5 days ago)"},
		{nowAt(3 * time.Hour), "Mon Nov 30 12:00:00 +0000 (2 hours from now)"},
	}
	for _, tt := range tests {
		if got := Timestamp(tt.then, nowAt(16*time.Minute)); got != tt.want {
			t.Errorf("Timestamp(%v) = %q, want %q", tt.then, got, tt.want)
		}
	}
	// Header times are shown in the location of Options.Now.
	est := time.FixedZone("EST", -5*3600)
	wf := stepsFailed()
	out := get(t, wf, Options{NoColor: true, Now: nowAt(16 * time.Minute).In(est)})
	if !strings.Contains(out, "Created:             Mon Nov 30 04:00:00 -0500 (16 minutes ago)\n") {
		t.Errorf("created time not in Now's location:\n%s", out)
	}
}

func TestPodName(t *testing.T) {
	long := strings.Repeat("w", 200)
	tests := []struct {
		name   string
		wf     string
		format string // annotation value; "-" for none
		node   v1alpha1.NodeStatus
		want   string
	}{
		{"semantics 1.3", "st", "v2", v1alpha1.NodeStatus{Name: "st[0].a", TemplateName: "echo"}, "st-echo-3477569709"},
		{"default is v2", "st", "-", v1alpha1.NodeStatus{Name: "st[0].a", TemplateName: "echo"}, "st-echo-3477569709"},
		{"unknown is v2", "st", "v3", v1alpha1.NodeStatus{Name: "st[0].a", TemplateName: "echo"}, "st-echo-3477569709"},
		{"v1 is the node id", "st", "v1", v1alpha1.NodeStatus{ID: "st-3477569709", Name: "st[0].a", TemplateName: "echo"}, "st-3477569709"},
		{"v1 without id", "st", "v1", v1alpha1.NodeStatus{Name: "st[0].a"}, "st-3477569709"},
		{"root is the workflow", "st", "v2", v1alpha1.NodeStatus{Name: "st", TemplateName: "main"}, "st"},
		{"no template", "st", "v2", v1alpha1.NodeStatus{Name: "st[0].a"}, "st-3477569709"},
		{"templateRef wins", "st", "v2", v1alpha1.NodeStatus{Name: "st[0].a", TemplateName: "echo",
			TemplateRef: &v1alpha1.TemplateRef{Name: "lib", Template: "say"}}, "st-say-3477569709"},
		{"§5.2 hello1", "steps-xk9vq", "v2", v1alpha1.NodeStatus{Name: "steps-xk9vq[0].hello1", TemplateName: "print-message"},
			"steps-xk9vq-print-message-3449935319"},
		{"prefix cut to 242", long, "v2", v1alpha1.NodeStatus{Name: long + "[0].a", TemplateName: strings.Repeat("t", 60)},
			(long + "-" + strings.Repeat("t", 60))[:242] + "-" + v1alpha1.NodeID("x", long+"[0].a")[2:]},
		{"prefix of 242 kept", strings.Repeat("w", 236), "v2", v1alpha1.NodeStatus{Name: "n", TemplateName: "tmpl5"},
			strings.Repeat("w", 236) + "-tmpl5-" + v1alpha1.NodeID("x", "n")[2:]},
	}
	for _, tt := range tests {
		wf := newWorkflow(tt.wf)
		if tt.format == "-" {
			wf.Annotations = nil
		} else {
			wf.Annotations[PodNameFormatAnnotation] = tt.format
		}
		if got := PodName(wf, &tt.node); got != tt.want {
			t.Errorf("%s: PodName = %q, want %q", tt.name, got, tt.want)
		}
		if got := PodName(wf, &tt.node); len(got) > 253 {
			t.Errorf("%s: PodName is %d characters", tt.name, len(got))
		}
	}
	if id := v1alpha1.NodeID("st", "st[0].a"); id != "st-3477569709" {
		t.Errorf("NodeID = %s: the hash under the pod names changed", id)
	}
}

func TestWatchFrame(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := Options{NoColor: true, Now: nowAt(15*time.Minute + 10*time.Second)}
	if err := WriteWatchFrame(&stdout, &stderr, stepsRunning(), o); err != nil {
		t.Fatal(err)
	}
	if stderr.String() != "\x1b[H\x1b[2J\x1b[0;0H" {
		t.Errorf("stderr = %q", stderr.String())
	}
	checkGolden(t, "watch_running", stdout.String())
	want := " ● steps-xk9vq  main\n" +
		" ├───✔ hello1   print-message  steps-xk9vq-print-message-3449935319  7s\n" +
		" └───● hello2   print-message  steps-xk9vq-print-message-2794516801  15m\n"
	if !strings.HasSuffix(trimLines(stdout.String()), want) {
		t.Errorf("frame differs from ARGO-API.md §5.3:\n%s", stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	if err := WriteWatchFrame(&stdout, &stderr, nil, o); err != nil || stdout.Len()+stderr.Len() != 0 {
		t.Errorf("a nil workflow should write nothing: %v %q %q", err, stdout.String(), stderr.String())
	}
}

func TestWaitLine(t *testing.T) {
	saved := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = saved })

	wf := stepsFailed()
	wf.Status.Phase = v1alpha1.WorkflowSucceeded
	wf.Status.FinishedAt = metav1.NewTime(t0.Add(20*time.Second + 300*time.Millisecond))
	if got, want := WaitLine(wf), "steps-xk9vq Succeeded at 2026-11-30 09:00:20 +0000 UTC"; got != want {
		t.Errorf("WaitLine = %q, want %q", got, want)
	}
}

func TestLogLine(t *testing.T) {
	if got := LogLine("steps-xk9vq-print-message-3449935319", "hello 1", false); got != "steps-xk9vq-print-message-3449935319: hello 1" {
		t.Errorf("LogLine = %q", got)
	}
	// "a" is 97: 97 % 6 = 1 -> yellow. "ab" is 195: 195 % 6 = 3 -> magenta.
	for pod, code := range map[string]string{"a": "33", "ab": "35", "": "32"} {
		want := "\x1b[" + code + "m" + pod + ": x\x1b[0m"
		if got := LogLine(pod, "x", true); got != want {
			t.Errorf("LogLine(%q) = %q, want %q", pod, got, want)
		}
	}
}
