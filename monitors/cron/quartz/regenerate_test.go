package quartz

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const quartzJar = "/usr/share/java/quartz2.jar"

// TestVectorsAreQuartzs regenerates testdata/vectors.json with Java Quartz
// where Java and Debian's libquartz2-java are installed, and checks that the
// committed file is what it writes. CI needs neither: the other tests only
// read the file.
func TestVectorsAreQuartzs(t *testing.T) {
	t.Parallel()
	java, errJava := exec.LookPath("java")
	javac, errJavac := exec.LookPath("javac")
	if _, err := os.Stat(quartzJar); err != nil || errJava != nil || errJavac != nil {
		t.Skip("no java, javac or " + quartzJar + ": the committed vectors are used as they are")
	}
	dir := t.TempDir()
	out, err := exec.Command(javac, "-cp", quartzJar, "-d", dir, "testdata/QuartzVectors.java").CombinedOutput()
	require.NoError(t, err, "%s", out)
	cp := dir + ":" + quartzJar + ":" + filepath.Join(filepath.Dir(quartzJar), "slf4j-api.jar") + ":" +
		filepath.Join(filepath.Dir(quartzJar), "slf4j-nop.jar")
	cmd := exec.Command(java, "-cp", cp, "QuartzVectors")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	want, err := os.ReadFile("testdata/vectors.json")
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "testdata/vectors.json is not what QuartzVectors.java writes: regenerate it")
}
