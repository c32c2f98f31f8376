package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	apiv1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/braidwf/braid/internal/executor/emissary"
)

// patcherArg, as the first argument, makes the bench the pod patcher of
// K2: a child process, so that its CPU is not counted as the controller's.
const patcherArg = "__patcher"

// patcherReady is the line the patcher prints once its informer synced.
const patcherReady = "patcher ready"

// runPatcher marks every pod of a namespace done as soon as it appears:
// all its containers terminated with exit code 0, the main one with the
// termination message the emissary writes, and phase Succeeded. It runs
// until SIGTERM.
func runPatcher(args []string) error {
	fs := flag.NewFlagSet(patcherArg, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig")
	ns := fs.String("namespace", "", "the namespace")
	workers := fs.Int("workers", 8, "concurrent status updates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ns == "" {
		return errors.New("no -namespace")
	}
	rc, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	rc.UserAgent, rc.QPS, rc.Burst = "braid-bench-patcher", 2000, 4000
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	queue := make(chan string, 1<<16)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*ns))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*apiv1.Pod); ok && pod.Status.Phase != apiv1.PodSucceeded {
				queue <- pod.Name
			}
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return errors.New("pod informer not synced")
	}
	fmt.Println(patcherReady)
	pods := cs.CoreV1().Pods(*ns)
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case name := <-queue:
					if err := markDone(ctx, pods, inf.GetStore(), *ns, name); err != nil && ctx.Err() == nil {
						fmt.Fprintf(os.Stderr, "mark %s done: %v\n", name, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

type podStatusWriter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiv1.Pod, error)
	UpdateStatus(ctx context.Context, pod *apiv1.Pod, opts metav1.UpdateOptions) (*apiv1.Pod, error)
}

// markDone writes the pod's status, from the informer's copy first and
// from a fresh read after a conflict.
func markDone(ctx context.Context, pods podStatusWriter, cached cache.Store, ns, name string) error {
	var pod *apiv1.Pod
	if obj, ok, _ := cached.GetByKey(ns + "/" + name); ok {
		pod, _ = obj.(*apiv1.Pod)
	}
	for attempt := 0; attempt < 5; attempt++ {
		if pod == nil {
			var err error
			if pod, err = pods.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		done, err := doneStatus(pod)
		if err != nil {
			return err
		}
		_, err = pods.UpdateStatus(ctx, done, metav1.UpdateOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		pod = nil
	}
	return errors.New("still conflicting after 5 attempts")
}

// doneStatus is pod with every container ended with exit code 0.
func doneStatus(pod *apiv1.Pod) (*apiv1.Pod, error) {
	now := time.Now()
	zero := int32(0)
	msg, err := json.Marshal(emissary.Message{ExitCode: &zero, StartedAt: &now, FinishedAt: &now})
	if err != nil {
		return nil, err
	}
	t := metav1.NewTime(now)
	ended := func(c apiv1.Container, message string) apiv1.ContainerStatus {
		return apiv1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, State: apiv1.ContainerState{
			Terminated: &apiv1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", Message: message, StartedAt: t, FinishedAt: t}}}
	}
	p := pod.DeepCopy()
	p.Status.Phase = apiv1.PodSucceeded
	p.Status.StartTime = &t
	p.Status.InitContainerStatuses = nil
	for _, c := range p.Spec.InitContainers {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, ended(c, ""))
	}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		m := ""
		if c.Name == "main" {
			m = string(msg)
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, ended(c, m))
	}
	return p, nil
}
