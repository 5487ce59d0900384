// kube-decode reads rendered Kubernetes manifests (a multi-document YAML stream, e.g. `helm template`) on
// stdin and decodes every object strictly into its k8s.io/api Go type: an unknown field, a wrong type or an
// unparsable quantity fails the object. Kinds outside k8s.io/api must be named with -crd Kind (they are
// reported, not decoded). Prints one line per object and exits 1 when any object fails.
//
// With -pod-security LEVEL (privileged, baseline or restricted) every pod template is also evaluated by
// Pod Security Admission's own evaluator (podsecurity.go); a pod that violates the level fails the run.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type crdList []string

func (c *crdList) String() string     { return strings.Join(*c, ",") }
func (c *crdList) Set(v string) error { *c = append(*c, v); return nil }

func newObject(apiVersion, kind string) any {
	switch apiVersion + "/" + kind {
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}
	case "v1/Service":
		return &corev1.Service{}
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}
	case "v1/Pod":
		return &corev1.Pod{}
	case "v1/PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "apps/v1/StatefulSet":
		return &appsv1.StatefulSet{}
	case "apps/v1/DaemonSet":
		return &appsv1.DaemonSet{}
	case "batch/v1/Job":
		return &batchv1.Job{}
	case "batch/v1/CronJob":
		return &batchv1.CronJob{}
	case "networking.k8s.io/v1/Ingress":
		return &networkingv1.Ingress{}
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "autoscaling/v2/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "rbac.authorization.k8s.io/v1/Role":
		return &rbacv1.Role{}
	case "rbac.authorization.k8s.io/v1/RoleBinding":
		return &rbacv1.RoleBinding{}
	}
	return nil
}

func main() {
	var crds crdList
	flag.Var(&crds, "crd", "a custom resource kind to accept without decoding (repeatable)")
	level := flag.String("pod-security", "", "evaluate every pod template against this Pod Security level (restricted, baseline, privileged)")
	flag.Parse()
	var psa *podSecurity
	if *level != "" {
		var err error
		if psa, err = newPodSecurity(*level); err != nil {
			fmt.Printf("FAIL %v\n", err)
			os.Exit(2)
		}
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(os.Stdin))
	failed, count := 0, 0
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Printf("FAIL reading the stream: %v\n", err)
			os.Exit(1)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			fmt.Printf("FAIL unparsable document: %v\n", err)
			failed++
			continue
		}
		if head.Kind == "" {
			continue // a comment-only document
		}
		count++
		id := fmt.Sprintf("%s %s/%s", head.APIVersion, head.Kind, head.Metadata.Name)
		obj := newObject(head.APIVersion, head.Kind)
		if obj == nil {
			accepted := false
			for _, c := range crds {
				accepted = accepted || c == head.Kind
			}
			if accepted {
				fmt.Printf("CRD  %s (not in k8s.io/api, accepted by -crd)\n", id)
			} else {
				fmt.Printf("FAIL %s: no k8s.io/api type for this apiVersion/kind\n", id)
				failed++
			}
			continue
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			fmt.Printf("FAIL %s: %v\n", id, err)
			failed++
			continue
		}
		fmt.Printf("OK   %s\n", id)
		if psa != nil {
			psa.check(id, obj)
		}
	}
	fmt.Printf("%d objects, %d failed\n", count, failed)
	if psa != nil {
		psa.summary()
		if psa.violating > 0 {
			os.Exit(1)
		}
	}
	if failed > 0 || count == 0 {
		os.Exit(1)
	}
}
