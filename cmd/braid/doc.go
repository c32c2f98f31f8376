// Command braid runs Argo Workflows specs: on one machine, or on Kubernetes.
package main
