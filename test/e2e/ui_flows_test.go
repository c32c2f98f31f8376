package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/braidwf/braid/internal/testutil"
)

// The pages, driven as a user would, against a real server with the
// secure defaults: submit from a template with a parameter and watch it
// finish, a node's logs and artifacts, retry from a node, resume a
// suspended workflow, the list's filters and a batch action; and
// axe-core on every page.
func TestUIFlows(t *testing.T) {
	s := newUISession(t)
	srv := s.srv
	s.login()
	mustPost(t, srv, "/api/v1/workflow-templates/default", `{"namespace":"default","template":{"metadata":{"name":"greet"},"spec":{
	  "entrypoint":"main","arguments":{"parameters":[{"name":"message","value":"hello","description":"what to say"}]},
	  "templates":[{"name":"main","steps":[[{"name":"say","template":"say"}]]},
	    {"name":"say","container":{"image":"busybox","command":["sh","-c","echo {{workflow.parameters.message}}; echo {{workflow.parameters.message}} > /tmp/out.txt"]},
	     "outputs":{"artifacts":[{"name":"out","path":"/tmp/out.txt","archive":{"none":{}}}]}}]}}}`)
	mustPost(t, srv, "/api/v1/workflows/default", `{"namespace":"default","workflow":{"metadata":{"name":"fails"},"spec":{"entrypoint":"main","templates":[
	  {"name":"main","dag":{"tasks":[{"name":"a","template":"ok"},{"name":"b","template":"bad","dependencies":["a"]}]}},
	  {"name":"ok","container":{"image":"busybox","command":["true"]}},
	  {"name":"bad","container":{"image":"busybox","command":["sh","-c","echo failing; exit 1"]}}]}}}`)
	for _, name := range []string{"waits", "batch-1", "batch-2"} {
		mustPost(t, srv, "/api/v1/workflows/default", fmt.Sprintf(`{"namespace":"default","workflow":{"metadata":{"name":%q},"spec":{"entrypoint":"main","templates":[
		  {"name":"main","steps":[[{"name":"approve","template":"approve"}]]},{"name":"approve","suspend":{}}]}}}`, name))
	}

	t.Run("submit from a template with a parameter", func(t *testing.T) {
		s.t = t
		s.step("open the submit form",
			chromedp.Navigate(s.url("/submit?kind=WorkflowTemplate&ns=default&name=greet")),
			chromedp.WaitVisible(chromedp.CSS(`form.sform input[id$="-p0"]`)))
		s.checkAccessibility("submit")
		s.step("submit",
			setValue(`form.sform input[id$="-p0"]`, "hi-from-the-ui"),
			clickText(`form.sform button[type=submit]`, "Submit"),
			waitJS(`location.pathname.startsWith("/workflows/default/greet-")`),
			waitJS(phaseIs("Succeeded")))
		s.checkAccessibility("details-graph")
		loc := uiValue(s, "where", chromedp.Location())
		name := loc[strings.LastIndex(loc, "/")+1:]
		say := nodeID(t, srv, name, "say")
		s.step("the node's logs",
			chromedp.Navigate(s.url("/workflows/default/"+name+"?node="+say+"&ntab=logs")),
			waitText(`.wf-panel`, "hi-from-the-ui"))
		s.checkAccessibility("node-logs")
		s.step("the node's artifacts",
			chromedp.Navigate(s.url("/workflows/default/"+name+"?node="+say+"&ntab=io")),
			waitText(`.wf-panel`, "out"),
			clickText(`.wf-panel button`, "Preview"),
			waitJS(`[...document.querySelectorAll('.wf-panel pre, .wf-panel iframe')].some(e => (e.innerText || '').includes('hi-from-the-ui'))`))
		s.step("the timeline", chromedp.Navigate(s.url("/workflows/default/"+name+"?tab=timeline")), waitText(`main`, "say"))
		s.checkAccessibility("details-timeline")
	})

	t.Run("retry from a node", func(t *testing.T) {
		s.t = t
		waitPhase(t, srv, "fails", "Failed")
		b := nodeID(t, srv, "fails", "b")
		before := nodeStarted(t, srv, "fails", "b")
		s.step("retry from b",
			chromedp.Navigate(s.url("/workflows/default/fails?node="+b)),
			clickText(`.wf-panel button`, "Retry from this node"),
			clickText(`dialog[open] button[type=submit]`, "Retry"))
		err := testutil.Poll(time.Minute, func() error {
			if nodeStarted(t, srv, "fails", "b") == before {
				return fmt.Errorf("node b still started at %s", before)
			}
			return nil
		})
		if err != nil {
			s.fail("b ran again", err)
		}
	})

	t.Run("resume a suspended workflow", func(t *testing.T) {
		s.t = t
		waitNodePhase(t, srv, "waits", "approve", "Running", time.Minute)
		s.step("resume",
			chromedp.Navigate(s.url("/workflows/default/waits")),
			waitJS(phaseIs("Running")),
			clickText(`.actions button`, "Resume"),
			clickText(`dialog[open] button[type=submit]`, "Resume"),
			waitJS(phaseIs("Succeeded")))
	})

	t.Run("filters", func(t *testing.T) {
		s.t = t
		s.step("phase Failed",
			chromedp.Navigate(s.url("/workflows/default")),
			waitText(`table`, "batch-2"),
			clickText(`.wl-phase-opt`, "Failed"),
			waitJS(rowsAre("fails")))
		s.checkAccessibility("list")
		s.step("back", chromedp.NavigateBack(), waitText(`table`, "batch-2"))
		s.step("name",
			setValue(`#wl-name`, "batch"),
			waitJS(rowsAre("batch-1", "batch-2")))
	})

	t.Run("batch delete", func(t *testing.T) {
		s.t = t
		s.step("select two and delete",
			acceptDialogs(),
			chromedp.Click(chromedp.CSS(`input[aria-label="Select batch-1"]`)),
			chromedp.Click(chromedp.CSS(`input[aria-label="Select batch-2"]`)),
			clickText(`.wl-batch button`, "Delete"),
			waitJS(`![...document.querySelectorAll('table tbody tr')].some(r => r.innerText.includes('batch-'))`))
		for _, name := range []string{"batch-1", "batch-2"} {
			resp, err := srv.get("/api/v1/workflows/default/" + name)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s after the batch delete: %s", name, resp.Status)
			}
		}
	})

	t.Run("the other pages", func(t *testing.T) {
		s.t = t
		for _, p := range []struct{ path, text string }{
			{"/workflow-templates", "greet"},
			{"/workflow-templates/default/greet", "greet"},
			{"/cluster-workflow-templates", "Cluster"},
			{"/cron-workflows", "Cron"},
			{"/event-bindings", "binding"},
			{"/userinfo", "Subject"},
		} {
			s.step("open "+p.path, chromedp.Navigate(s.url(p.path)), waitText(`main`, p.text))
			s.checkAccessibility(strings.ReplaceAll(strings.Trim(p.path, "/"), "/", "-"))
		}
		s.step("dark mode",
			chromedp.Evaluate[chromedp.Void](`localStorage.setItem('braid.theme', 'dark'); undefined`),
			chromedp.Navigate(s.url("/workflows/default/fails")), waitJS(phaseIs("Failed")),
			waitJS(`document.documentElement.dataset.theme === 'dark'`))
		s.checkAccessibility("details-dark")
	})
}

// phaseIs is true when the details page's header shows the phase.
func phaseIs(phase string) string {
	return fmt.Sprintf(`(() => { const dt = [...document.querySelectorAll('main dt')].find(d => d.innerText.trim() === 'Phase');
	  return !!dt && dt.nextElementSibling.innerText.includes(%q); })()`, phase)
}

// rowsAre is true when the list's rows are exactly these workflows.
func rowsAre(names ...string) string {
	b, _ := json.Marshal(names)
	return fmt.Sprintf(`(() => { const want = %s; const rows = [...document.querySelectorAll('table tbody tr')];
	  return rows.length === want.length && want.every(n => rows.some(r => r.querySelector('a') && r.querySelector('a').innerText.trim() === n)); })()`, b)
}

// workflowNodes is the workflow's nodes as the API returns them.
func workflowNodes(t *testing.T, srv *braidServer, name string) (phase string, nodes map[string]struct {
	ID, DisplayName, Phase, StartedAt string
}) {
	t.Helper()
	resp, err := srv.get("/api/v1/workflows/default/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var wf struct {
		Status struct {
			Phase string `json:"phase"`
			Nodes map[string]struct {
				ID, DisplayName, Phase, StartedAt string
			} `json:"nodes"`
		} `json:"status"`
	}
	if err := json.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v: %.200s", name, err, b)
	}
	return wf.Status.Phase, wf.Status.Nodes
}

func nodeID(t *testing.T, srv *braidServer, wf, display string) string {
	t.Helper()
	_, nodes := workflowNodes(t, srv, wf)
	for id, n := range nodes {
		if n.DisplayName == display {
			return id
		}
	}
	t.Fatalf("%s has no node %s", wf, display)
	return ""
}

func nodeStarted(t *testing.T, srv *braidServer, wf, display string) string {
	t.Helper()
	_, nodes := workflowNodes(t, srv, wf)
	for _, n := range nodes {
		if n.DisplayName == display {
			return n.StartedAt
		}
	}
	return ""
}

func waitPhase(t *testing.T, srv *braidServer, wf, phase string) {
	t.Helper()
	testutil.Eventually(t, 2*time.Minute, wf+" "+phase, func() error {
		if p, _ := workflowNodes(t, srv, wf); p != phase {
			return fmt.Errorf("phase %q", p)
		}
		return nil
	})
}
