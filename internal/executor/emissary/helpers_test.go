package emissary

import (
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func notify(c chan os.Signal) { signal.Notify(c, syscall.SIGTERM, syscall.SIGINT) }

func yamlToTemplate(src string, t *v1alpha1.Template) error {
	return yaml.UnmarshalStrict([]byte(src), t)
}
