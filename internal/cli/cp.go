package cli

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

type cpFlags struct {
	artifactName, nodeID, templateName, path string
}

func newCpCommand(s streams, g *globalFlags) *cobra.Command {
	var f cpFlags
	cmd := &cobra.Command{
		Use:   "cp WORKFLOW OUTPUT_DIRECTORY",
		Short: "copy a workflow's output artifacts to a local directory",
		Example: `  braid cp my-wf output-directory
  braid cp my-wf out --artifact-name result --template-name gen
  braid cp my-wf out --path "{workflowName}/{templateName}/{artifactName}"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return runCp(ctx, s, sess, args[0], args[1], f)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.artifactName, "artifact-name", "", "name of output artifact in workflow")
	fl.StringVar(&f.nodeID, "node-id", "", "id of node in workflow")
	fl.StringVar(&f.templateName, "template-name", "", "name of template in workflow")
	fl.StringVar(&f.path, "path", "{namespace}/{workflowName}/{nodeId}/outputs/{artifactName}",
		"use variables {workflowName}, {nodeId}, {templateName}, {artifactName}, and {namespace} to create a customized path to store the artifacts")
	return cmd
}

// runCp downloads every output artifact that matches the filters through
// the server's artifact route, as argo cp does.
func runCp(ctx context.Context, s streams, sess *session, name, outDir string, f cpFlags) error {
	wf, err := getWorkflow(ctx, sess, name)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(wf.Status.Nodes))
	for id := range wf.Status.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := wf.Status.Nodes[id]
		if n.Outputs == nil || (f.nodeID != "" && f.nodeID != id) || (f.templateName != "" && f.templateName != n.TemplateName) {
			continue
		}
		for _, a := range n.Outputs.Artifacts {
			if (f.artifactName != "" && f.artifactName != a.Name) || !a.HasLocation() {
				continue
			}
			dir := filepath.Join(outDir, cpPath(f.path, wf, n, a.Name))
			file, err := downloadArtifact(ctx, sess, wf, id, a.Name, dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "Created %q\n", file)
		}
	}
	return nil
}

// dispositionFile reads the file name of a Content-Disposition header,
// which argo-server sends without a disposition type (filename="x").
func dispositionFile(h string) string {
	if !strings.HasPrefix(h, "attachment") && !strings.HasPrefix(h, "inline") {
		h = "attachment; " + h
	}
	_, params, err := mime.ParseMediaType(h)
	if err != nil {
		return ""
	}
	f := filepath.Base(params["filename"])
	if f == "." || f == "/" || f == ".." {
		return ""
	}
	return f
}

func cpPath(format string, wf *v1alpha1.Workflow, n v1alpha1.NodeStatus, artifact string) string {
	return strings.NewReplacer(
		"{workflowName}", wf.Name, "{nodeId}", n.ID, "{templateName}", n.TemplateName,
		"{artifactName}", artifact, "{namespace}", wf.Namespace,
	).Replace(format)
}

// downloadArtifact saves one artifact into dir under the file name the
// server gives, and returns the file's path.
func downloadArtifact(ctx context.Context, sess *session, wf *v1alpha1.Workflow, nodeID, name, dir string) (string, error) {
	p := "/artifacts/" + url.PathEscape(wf.Namespace) + "/" + url.PathEscape(wf.Name) + "/" + url.PathEscape(nodeID) + "/" + url.PathEscape(name)
	resp, err := sess.Get(ctx, p)
	if err != nil {
		return "", fmt.Errorf("download artifact %s of node %s: %w", name, nodeID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", fmt.Errorf("download artifact %s of node %s: %s: %s", name, nodeID, resp.Status, strings.TrimSpace(string(body)))
	}
	file := name
	if f := dispositionFile(resp.Header.Get("Content-Disposition")); f != "" {
		file = f
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, file)
	fh, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(fh, resp.Body); err != nil {
		fh.Close()
		return "", fmt.Errorf("download artifact %s of node %s: %w", name, nodeID, err)
	}
	return out, fh.Close()
}
