package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/braidwf/braid/internal/app"
	"github.com/braidwf/braid/internal/server/auth"
)

// braid auth: the tokens of the data directory's server. These commands
// read and write the data directory's files themselves (braid's user
// only), as kubectl edits ServiceAccounts; a running server sees a change
// at its next request.

func newAuthCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Manage authentication: the tokens of braid server on this machine",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAuthTokenCommand(s, g))
	return cmd
}

// openTokens opens the token store of the data directory.
func (g *globalFlags) openTokens() (*auth.Tokens, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	if err := app.MakeDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	return auth.OpenTokens(cfg.DataDir, nil)
}

func newAuthTokenCommand(s streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the local token (as argo auth token), or manage named tokens",
		Long: `Print the Authorization value of the local token, which braid server makes on
its first start in the data directory (mode 0600) and the braid CLI sends with
no flags. Other clients send it as it is printed:

  ARGO_TOKEN="$(braid auth token)" argo list

Named tokens stand in for ServiceAccounts and their Roles: each has a
subject, the namespaces it may act in and the verbs it may use there.`,
		Example: `  braid auth token
  braid auth token create --name ci --namespace argo --verb create --verb get --verb list --verb watch
  braid auth token list
  braid auth token revoke ci`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t, err := g.openTokens()
			if err != nil {
				return err
			}
			cred, err := t.EnsureLocal()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(s.out, cred)
			return err
		},
	}
	cmd.AddCommand(newTokenCreateCommand(s, g), newTokenListCommand(s, g), newTokenRevokeCommand(s, g))
	return cmd
}

func newTokenCreateCommand(s streams, g *globalFlags) *cobra.Command {
	var (
		tok     auth.Token
		expires time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create --name NAME --namespace NS... --verb VERB...",
		Short: "Create a named token and print it (the only time it is shown)",
		Long: `Create a named token. --namespace and --verb are repeatable; '*' means every
namespace (and the cluster-scoped kinds) or every verb. Verbs: ` + strings.Join(auth.Verbs, ", ") + `.
--cluster adds the cluster-scoped kinds (ClusterWorkflowTemplates) alone.
With --rbac-rule, SSO users whose claims make the expression true act as
this token (Argo's workflows.argoproj.io/rbac-rule annotation); the highest
--rbac-rule-precedence wins.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t, err := g.openTokens()
			if err != nil {
				return err
			}
			cred, err := t.Create(tok, expires)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(s.out, cred)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&tok.Name, "name", "", "the token's name")
	fl.StringVar(&tok.Subject, "subject", "", "who the token stands for (default: its name)")
	fl.StringArrayVar(&tok.Namespaces, "namespace", nil, "a namespace it may act in ('*': all); repeatable")
	fl.StringArrayVar(&tok.Verbs, "verb", nil, "a verb it may use ('*': all); repeatable")
	fl.BoolVar(&tok.Cluster, "cluster", false, "it may also act on cluster-scoped kinds")
	fl.DurationVar(&expires, "expires-in", 0, "it stops working after this long (default: never)")
	fl.StringVar(&tok.RBACRule, "rbac-rule", "", "SSO users for whom this expr over their claims is true act as this token")
	fl.IntVar(&tok.RBACRulePrecedence, "rbac-rule-precedence", 0, "the rule's precedence: the highest true rule wins")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newTokenListCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output, "json", "name"); err != nil {
				return err
			}
			t, err := g.openTokens()
			if err != nil {
				return err
			}
			list, err := t.List()
			if err != nil {
				return err
			}
			switch output {
			case "json":
				for i := range list {
					list[i].SHA256 = ""
				}
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			case "name":
				for _, tk := range list {
					fmt.Fprintln(s.out, tk.Name)
				}
				return nil
			}
			w := newTable(s.out)
			fmt.Fprintln(w, "NAME\tSUBJECT\tNAMESPACES\tVERBS\tCLUSTER\tEXPIRES\tCREATED")
			for _, tk := range list {
				exp := "never"
				if tk.ExpiresAt != nil {
					exp = tk.ExpiresAt.Format(time.RFC3339)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%t\t%s\t%s\n", tk.Name, tk.Subject, strings.Join(tk.Namespaces, ","),
					strings.Join(tk.Verbs, ","), tk.Cluster, exp, tk.CreatedAt.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or name")
	return cmd
}

func newTokenRevokeCommand(s streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME...",
		Short: "Revoke named tokens: they stop working at the server's next request",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			t, err := g.openTokens()
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := t.Revoke(name); err != nil {
					return err
				}
				fmt.Fprintf(s.out, "token %q revoked\n", name)
			}
			return nil
		},
	}
}
