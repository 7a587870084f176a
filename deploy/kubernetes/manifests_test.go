// Package kubernetes tests the manifests and the image recipe of a run
// across machines without a cluster: each manifest decoded strictly into
// the Kubernetes API types (an unknown or misspelt field is an error), the
// Job's numbers and names checked against each other and against the
// Dockerfile, and the binaries the Dockerfile copies built static. Its own
// module, so Kubernetes' packages are no dependency of islkit.
package kubernetes

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes one manifest document into the API type of its
// apiVersion and kind, refusing unknown and duplicate fields.
func decodeStrict(doc []byte) (any, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	default:
		return nil, fmt.Errorf("no API type known for apiVersion %q kind %q", head.APIVersion, head.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// manifests decodes every document of every *.yaml here.
func manifests(t *testing.T) map[string][]any {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string][]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			out[f] = append(out[f], obj)
		}
	}
	return out
}

// TestManifestsStrict: every manifest decodes strictly, and the decoder
// does refuse what the API server would (a misspelt field, a wrong type).
func TestManifestsStrict(t *testing.T) {
	got := manifests(t)
	for _, f := range []string{"job.yaml", "configmap.yaml", "testserver.yaml"} {
		if len(got[f]) == 0 {
			t.Errorf("%s: no objects", f)
		}
	}
	for _, bad := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: four\n",
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n  a: c\n",
		"apiVersion: batch/v2\nkind: Job\n",
	} {
		if _, err := decodeStrict([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// TestJobConsistent: the Job is Indexed with N completions run at once,
// each pod sending --shard env/N at --start-at (filled in at apply time),
// not retried (a retried shard would send its requests twice); it reads
// the ConfigMap's file where send is told to, runs a binary the image
// has, and sends to the Service testserver.yaml defines.
func TestJobConsistent(t *testing.T) {
	m := manifests(t)
	job := m["job.yaml"][0].(*batchv1.Job)
	cm := m["configmap.yaml"][0].(*corev1.ConfigMap)
	var svc *corev1.Service
	var dep *appsv1.Deployment
	for _, o := range m["testserver.yaml"] {
		switch o := o.(type) {
		case *corev1.Service:
			svc = o
		case *appsv1.Deployment:
			dep = o
		}
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || s.Parallelism == nil ||
		*s.Parallelism != *s.Completions || s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("job spec: %+v", s)
	}
	c := s.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	if want := fmt.Sprintf("--shard=env/%d", *s.Completions); !slices.Contains(c.Args, want) {
		t.Errorf("args %q lack %s (completions %d)", args, want, *s.Completions)
	}
	if !slices.Contains(c.Args, "--start-at=START_AT") {
		t.Errorf("args %q lack --start-at=START_AT, the time the README's sed fills in", args)
	}
	if len(c.Command) != 1 || !slices.Contains(imageBinaries(t), c.Command[0]) {
		t.Errorf("job runs %q, not a binary of the image %q", c.Command, imageBinaries(t))
	}
	// The conversations file: the ConfigMap's key under the mount.
	mount := c.VolumeMounts[0]
	vol := s.Template.Spec.Volumes[0]
	if vol.Name != mount.Name || vol.ConfigMap == nil || vol.ConfigMap.Name != cm.Name {
		t.Fatalf("volume %+v, mount %+v, configmap %s", vol, mount, cm.Name)
	}
	var keys []string
	for k := range cm.Data {
		keys = append(keys, filepath.Join(mount.MountPath, k))
	}
	if last := c.Args[len(c.Args)-1]; !slices.Contains(keys, last) {
		t.Errorf("send reads %s; the ConfigMap mounts %q", last, keys)
	}
	if svc == nil || dep == nil {
		t.Fatal("testserver.yaml: want a Deployment and a Service")
	}
	if want := fmt.Sprintf("--url=http://%s:%d", svc.Name, svc.Spec.Ports[0].Port); !slices.Contains(c.Args, want) {
		t.Errorf("args %q lack %s (testserver.yaml's Service)", args, want)
	}
	if cmd := dep.Spec.Template.Spec.Containers[0].Command; len(cmd) != 1 || !slices.Contains(imageBinaries(t), cmd[0]) {
		t.Errorf("the test server runs %q, not a binary of the image", cmd)
	}
}

// dockerfileCopy reads the Dockerfile: its base and its one COPY's
// sources and destination.
func dockerfileCopy(t *testing.T) (from string, sources []string, dest string) {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			from = fields[1]
		case "COPY":
			if sources != nil {
				t.Fatal("Dockerfile: more than one COPY")
			}
			sources, dest = fields[1:len(fields)-1], fields[len(fields)-1]
		}
	}
	return from, sources, dest
}

// imageBinaries are the paths of the binaries in the image.
func imageBinaries(t *testing.T) []string {
	_, sources, dest := dockerfileCopy(t)
	var out []string
	for _, s := range sources {
		out = append(out, filepath.Join(dest, filepath.Base(s)))
	}
	return out
}

// staticTools reads the tools `make static` builds (STATIC_TOOLS).
func staticTools(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var tools, static []string
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(name) {
		case "TOOLS":
			tools = strings.Fields(value)
		case "STATIC_TOOLS":
			for _, f := range strings.Fields(value) {
				if f == "$(TOOLS)" {
					static = append(static, tools...)
				} else {
					static = append(static, f)
				}
			}
		}
	}
	return static
}

// TestStaticImage: the Dockerfile starts from scratch and copies exactly
// what `make static` builds; each of those, built as it does
// (CGO_ENABLED=0), is a static executable (no ELF interpreter, no shared
// library), so it runs in an image with nothing else; and the example
// ConfigMap's conversations are input send reads.
func TestStaticImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tools without cgo")
	}
	from, sources, _ := dockerfileCopy(t)
	if from != "scratch" {
		t.Errorf("Dockerfile FROM %s, want scratch", from)
	}
	tools := staticTools(t)
	var want []string
	for _, tool := range tools {
		want = append(want, "bin/static/"+tool)
	}
	if len(tools) == 0 || !slices.Equal(sources, want) {
		t.Fatalf("Dockerfile copies %q; make static builds %q", sources, want)
	}
	bin := t.TempDir()
	args := []string{"build", "-trimpath", "-o", bin + "/"}
	for _, tool := range tools {
		args = append(args, "./cmd/"+tool)
	}
	build := exec.Command("go", args...)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tool := range tools {
		f, err := elf.Open(filepath.Join(bin, tool))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has an ELF interpreter: not static", tool)
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("%s needs shared libraries %q (%v)", tool, libs, err)
		}
		f.Close()
	}
	// The example data is what send reads: 4 conversations of 2 turns.
	cm := manifests(t)["configmap.yaml"][0].(*corev1.ConfigMap)
	convs := filepath.Join(t.TempDir(), "conversations.jsonl")
	if err := os.WriteFile(convs, []byte(cm.Data["conversations.jsonl"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "send"), "--dry-run", convs).Output()
	if err != nil {
		t.Fatalf("send --dry-run of the ConfigMap's conversations: %v", err)
	}
	if n := bytes.Count(out, []byte("\n")); n != 8 {
		t.Errorf("send --dry-run wrote %s requests, want 8", strconv.Itoa(n))
	}
}
