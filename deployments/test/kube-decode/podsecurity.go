package main

// Pod Security Admission, offline: every pod template of the decoded objects is evaluated by the Kubernetes
// project's own evaluator (k8s.io/pod-security-admission/policy, the code the API server's admission plugin
// runs) at one level (privileged, baseline, restricted) of the latest policy version it knows.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// podOf returns the pod metadata and spec an object creates (the ones admission checks), or nil.
func podOf(obj any) (*metav1.ObjectMeta, *corev1.PodSpec) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta, &o.Spec
	case *appsv1.Deployment:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *appsv1.DaemonSet:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *batchv1.Job:
		return &o.Spec.Template.ObjectMeta, &o.Spec.Template.Spec
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template.ObjectMeta, &o.Spec.JobTemplate.Spec.Template.Spec
	}
	return nil, nil
}

type podSecurity struct {
	evaluator policy.Evaluator
	level     psapi.LevelVersion
	pods      int
	violating int
}

func newPodSecurity(level string) (*podSecurity, error) {
	l, err := psapi.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("-pod-security %q: %v", level, err)
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		return nil, err
	}
	return &podSecurity{evaluator: evaluator, level: psapi.LevelVersion{Level: l, Version: psapi.LatestVersion()}}, nil
}

// check prints one line per pod: `PSA  OK <id>` or `PSA  DENY <id>: <reason>: <detail>` per failed check
// (the reasons and details the API server would answer with).
func (p *podSecurity) check(id string, obj any) {
	meta, spec := podOf(obj)
	if spec == nil {
		return
	}
	p.pods++
	denied := false
	for _, r := range p.evaluator.EvaluatePod(p.level, meta, spec) {
		if r.Allowed {
			continue
		}
		denied = true
		fmt.Printf("PSA  DENY %s: %s: %s\n", id, r.ForbiddenReason, r.ForbiddenDetail)
	}
	if denied {
		p.violating++
	} else {
		fmt.Printf("PSA  OK %s\n", id)
	}
}

func (p *podSecurity) summary() {
	fmt.Printf("pod security %s (%s): %d pods, %d violating\n", p.level.Level, p.level.Version, p.pods, p.violating)
}
