#!/usr/bin/env bash
# Build ARX's core library (tag v3.9.2 by default) and benchmarks/arx/Harness.java with javac.
#
#   benchmarks/arx/build.sh SOURCE [OUT]
#
# SOURCE: an ARX checkout (a directory with src/main and lib/) or a git directory of ARX's repository
# (bare or not; the tag in ARX_TAG, default v3.9.2, is extracted). OUT: build directory (default
# /tmp/arx). Needs a JDK (javac, java >= 11); no ant, maven or network. Writes OUT/classpath.txt;
# run the harness with:  java -cp "$(cat OUT/classpath.txt)" Harness CONFIG_FILE
#
# The GUI (src/gui) is not compiled. The PDF certificate's pdfbox classes and hadoop's Writable are
# absent from some copies of ARX's lib/ (large files): compile-time stand-ins are generated for them
# when the jar is missing (they are never called by the harness). Nothing of ARX is copied into sdckit.
set -euo pipefail

SOURCE=${1:?usage: build.sh ARX_CHECKOUT_OR_GIT_DIR [OUT]}
OUT=${2:-/tmp/arx}
TAG=${ARX_TAG:-v3.9.2}
HERE=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$OUT"
if [ -d "$SOURCE/src/main" ] && [ -d "$SOURCE/lib" ]; then
    ARX="$SOURCE"
else
    ARX="$OUT/src"
    rm -rf "$ARX" && mkdir -p "$ARX" "$ARX/lib"
    git --git-dir="$SOURCE" archive "$TAG" src/main | tar -x -C "$ARX"
    # jars one by one: a copy of the repository may lack some large blobs
    git --git-dir="$SOURCE" ls-tree -r --name-only "$TAG" lib | grep '\.jar$' | while read -r jar; do
        if git --git-dir="$SOURCE" cat-file -e "$TAG:$jar" 2>/dev/null; then
            mkdir -p "$ARX/$(dirname "$jar")"
            git --git-dir="$SOURCE" show "$TAG:$jar" >"$ARX/$jar"
        else
            echo "build.sh: $jar is missing from $SOURCE (a stand-in is used if needed)" >&2
        fi
    done
fi

# Libraries: every jar under lib/ except the GUI's (SWT, Eclipse).
CP=$(find "$ARX/lib" -name '*.jar' | grep -v -e swt -e eclipse -e /gui/ | sort | tr '\n' ':')

# Compile-time stand-ins for jars a copy may lack.
STUBS="$OUT/stubs"
rm -rf "$STUBS" "$OUT/stubclasses" && mkdir -p "$OUT/stubclasses"
if ! find "$ARX/lib" -name 'pdfbox-app*.jar' | grep -q .; then
    mkdir -p "$STUBS/org/apache/pdfbox/pdmodel/font" "$STUBS/org/apache/pdfbox/multipdf"
    cat >"$STUBS/org/apache/pdfbox/pdmodel/PDDocument.java" <<'EOF'
package org.apache.pdfbox.pdmodel;
public class PDDocument implements java.io.Closeable {
    public static PDDocument load(java.io.File f) throws java.io.IOException { throw new java.io.IOException("pdfbox not available"); }
    public static PDDocument load(java.io.InputStream s) throws java.io.IOException { throw new java.io.IOException("pdfbox not available"); }
    public void save(java.io.OutputStream s) throws java.io.IOException { throw new java.io.IOException("pdfbox not available"); }
    public void close() {}
}
EOF
    cat >"$STUBS/org/apache/pdfbox/pdmodel/font/PDFont.java" <<'EOF'
package org.apache.pdfbox.pdmodel.font;
public abstract class PDFont {}
EOF
    cat >"$STUBS/org/apache/pdfbox/multipdf/Overlay.java" <<'EOF'
package org.apache.pdfbox.multipdf;
public class Overlay {
    public enum Position { FOREGROUND, BACKGROUND }
    public void setInputPDF(org.apache.pdfbox.pdmodel.PDDocument d) {}
    public void setAllPagesOverlayPDF(org.apache.pdfbox.pdmodel.PDDocument d) {}
    public void setOverlayPosition(Position p) {}
    public org.apache.pdfbox.pdmodel.PDDocument overlay(java.util.Map<Integer, String> m) throws java.io.IOException { throw new java.io.IOException("pdfbox not available"); }
}
EOF
fi
if ! find "$ARX/lib" -name 'hadoop*.jar' | grep -q .; then
    mkdir -p "$STUBS/org/apache/hadoop/io"
    cat >"$STUBS/org/apache/hadoop/io/Writable.java" <<'EOF'
package org.apache.hadoop.io;
public interface Writable {
    void write(java.io.DataOutput out) throws java.io.IOException;
    void readFields(java.io.DataInput in) throws java.io.IOException;
}
EOF
fi
if [ -d "$STUBS" ]; then
    javac -nowarn -d "$OUT/stubclasses" $(find "$STUBS" -name '*.java')
fi

# ARX's core library (without the GUI) and its resources.
rm -rf "$OUT/classes" && mkdir -p "$OUT/classes"
find "$ARX/src/main" -name '*.java' >"$OUT/sources.txt"
javac -nowarn -encoding UTF-8 -d "$OUT/classes" -cp "$CP$OUT/stubclasses" @"$OUT/sources.txt" 2>&1 | grep -v '^Note:' || true
(cd "$ARX/src/main" && find . -type f ! -name '*.java' -exec cp --parents {} "$OUT/classes/" \;)
test -f "$OUT/classes/org/deidentifier/arx/ARXAnonymizer.class" || { echo "build.sh: ARX did not compile" >&2; exit 1; }

# The harness.
mkdir -p "$OUT/harness"
javac -nowarn -encoding UTF-8 -d "$OUT/harness" -cp "$OUT/classes:$CP$OUT/stubclasses" "$HERE/Harness.java"
echo "$OUT/harness:$OUT/classes:$CP$OUT/stubclasses" >"$OUT/classpath.txt"
echo "build.sh: built ARX $TAG and the harness in $OUT; classpath in $OUT/classpath.txt"
