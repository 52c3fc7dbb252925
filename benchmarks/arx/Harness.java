/*
 * sdckit benchmark harness for ARX (https://arx.deidentifier.org), written for sdckit's side-by-side
 * benchmarks. It runs ARX's optimal global-recoding search on one CSV with hierarchies and prints, per
 * configuration, one JSON line: the optimum's generalization level per quasi-identifier, its loss, the
 * transformations ARX checked and the CPU time of each timed call (thread CPU of the calling thread).
 *
 * Build and run: benchmarks/arx/build.sh (it compiles ARX's core library and this file), then
 *     java -cp "$ARX_CLASSPATH" Harness CONFIG_FILE [CONFIG_FILE ...]
 * A config file holds one or more configurations separated by a line "---"; each line key=value,
 * "#" starts a comment. Keys (docs/benchmarks.md, "ARX side by side"):
 *   name=label                        echoed in the output
 *   data=path.csv                     records (first line: header); separator=; (default ;)
 *   hierarchy.<column>=path.csv       ARX hierarchy CSV (same separator)
 *   qi=a,b,c                          quasi-identifiers (each needs a hierarchy)
 *   sensitive=a[,b]                   sensitive attributes (other columns are insensitive)
 *   model=NAME(key=value,...)         repeatable; NAME one of
 *       k-anonymity(k) distinct-l(attribute,l) entropy-l(attribute,l) recursive-cl(attribute,c,l)
 *       equal-t(attribute,t) hierarchical-t(attribute,t[,hierarchy=path]) ordered-t(attribute,t)
 *       basic-beta(attribute,beta) enhanced-beta(attribute,beta) delta-disclosure(attribute,delta)
 *       average-risk(threshold[,highest,at_risk]) sample-uniqueness(threshold)
 *       population-uniqueness(threshold,estimator=PITMAN|ZAYATZ|SNB|DANKAR,population=N|fraction=f)
 *       d-presence(dmin,dmax,subset=flags.txt) k-map(k,subset=flags.txt)
 *       k-map(k,significance,estimator=POISSON|ZERO_TRUNCATED_POISSON,population=N|fraction=f)
 *       ed-dp(epsilon,delta,scheme=NONE|LOW|LOW_MEDIUM|MEDIUM|MEDIUM_HIGH|HIGH|COMPLETE|data-dependent,
 *             search_budget,search_steps,deterministic=true|false)
 *     a flags file has one line per record (1/0 or true/false; a first line that is neither is a header)
 *   suppression=0.05                  suppression limit (default 0)
 *   metric=loss|classification|entropy|normalized-entropy|precision|height|discernibility|aecs|ambiguity|kl
 *   gs_factor=0.5                     generalization/suppression factor (loss, classification)
 *   aggregate=ARITHMETIC_MEAN|GEOMETRIC_MEAN|SUM|MAXIMUM|RANK   aggregate function of the loss metric
 *   weight.<column>=w                 attribute weight in the metric
 *   target=a[,b]                      response variables (the classification metric's target)
 *   repeats=5  warmup=2               timed calls after untimed warm-up calls
 *   output=true                       also build the optimum's output inside each timed call
 *                                     (result.getOutput(false)) and read every cell of it (getValue),
 *                                     as sdckit's call builds its released table (default false:
 *                                     anonymize() alone, which builds no output)
 */

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataGeneralizationScheme;
import org.deidentifier.arx.DataGeneralizationScheme.GeneralizationDegree;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.DataSubset;
import org.deidentifier.arx.criteria.AverageReidentificationRisk;
import org.deidentifier.arx.criteria.BasicBLikeness;
import org.deidentifier.arx.criteria.DDisclosurePrivacy;
import org.deidentifier.arx.criteria.DPresence;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EDDifferentialPrivacy;
import org.deidentifier.arx.criteria.EnhancedBLikeness;
import org.deidentifier.arx.criteria.EntropyLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.KMap;
import org.deidentifier.arx.criteria.OrderedDistanceTCloseness;
import org.deidentifier.arx.criteria.PopulationUniqueness;
import org.deidentifier.arx.criteria.PrivacyCriterion;
import org.deidentifier.arx.criteria.RecursiveCLDiversity;
import org.deidentifier.arx.criteria.SampleUniqueness;
import org.deidentifier.arx.metric.InformationLoss;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness.PopulationUniquenessModel;

public final class Harness {

    /** One configuration: ordered key/value pairs (model may repeat). */
    private static final class Config {
        final Map<String, String> values = new LinkedHashMap<>();
        final List<String> models = new ArrayList<>();

        String get(String key, String fallback) {
            String value = values.get(key);
            return value == null ? fallback : value;
        }

        String require(String key) {
            String value = values.get(key);
            if (value == null) {
                throw new IllegalArgumentException("missing key: " + key);
            }
            return value;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: java Harness CONFIG_FILE [CONFIG_FILE ...]  (see the header of Harness.java)");
            System.exit(2);
        }
        for (String path : args) {
            for (Config config : parse(new File(path))) {
                System.out.println(run(config));
                System.out.flush();
            }
        }
    }

    static List<Config> parse(File file) throws IOException {
        List<Config> configs = new ArrayList<>();
        Config current = new Config();
        for (String raw : Files.readAllLines(file.toPath(), StandardCharsets.UTF_8)) {
            String line = raw.strip();
            if (line.equals("---")) {
                if (!current.values.isEmpty() || !current.models.isEmpty()) {
                    configs.add(current);
                }
                current = new Config();
                continue;
            }
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int equals = line.indexOf('=');
            if (equals < 0) {
                throw new IllegalArgumentException(file + ": not key=value: " + line);
            }
            String key = line.substring(0, equals).strip();
            String value = line.substring(equals + 1).strip();
            if (key.equals("model")) {
                current.models.add(value);
            } else {
                current.values.put(key, value);
            }
        }
        if (!current.values.isEmpty() || !current.models.isEmpty()) {
            configs.add(current);
        }
        return configs;
    }

    /** The records of a CSV as rows (header first). */
    static List<String[]> readCsv(String path, char separator) throws IOException {
        List<String[]> rows = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(new File(path).toPath(), StandardCharsets.UTF_8)) {
            String line;
            String pattern = java.util.regex.Pattern.quote(String.valueOf(separator));
            while ((line = reader.readLine()) != null) {
                if (line.isEmpty()) {
                    continue;
                }
                rows.add(line.split(pattern, -1));
            }
        }
        return rows;
    }

    /** Row indices flagged in a file with one line per record. */
    static Set<Integer> readFlags(String path, int records) throws IOException {
        List<String> lines = Files.readAllLines(new File(path).toPath(), StandardCharsets.UTF_8);
        Set<Integer> flagged = new HashSet<>();
        int row = 0;
        for (int i = 0; i < lines.size(); i++) {
            String value = lines.get(i).strip().toLowerCase(Locale.ROOT);
            if (value.isEmpty()) {
                continue;
            }
            boolean yes = value.equals("1") || value.equals("true");
            boolean no = value.equals("0") || value.equals("false");
            if (!yes && !no) {
                if (i == 0) {
                    continue; // header
                }
                throw new IllegalArgumentException(path + ": line " + (i + 1) + " is not 1/0/true/false");
            }
            if (yes) {
                flagged.add(row);
            }
            row++;
        }
        if (row != records) {
            throw new IllegalArgumentException(path + ": " + row + " flags for " + records + " records");
        }
        return flagged;
    }

    /** NAME(key=value,...) split into the name (index "") and its arguments. */
    static Map<String, String> parseModel(String text) {
        Map<String, String> result = new LinkedHashMap<>();
        int open = text.indexOf('(');
        if (open < 0 || !text.endsWith(")")) {
            throw new IllegalArgumentException("model must be NAME(key=value,...): " + text);
        }
        result.put("", text.substring(0, open).strip());
        String inner = text.substring(open + 1, text.length() - 1).strip();
        if (!inner.isEmpty()) {
            for (String part : inner.split(",")) {
                int equals = part.indexOf('=');
                if (equals < 0) {
                    throw new IllegalArgumentException("model argument must be key=value: " + part);
                }
                result.put(part.substring(0, equals).strip(), part.substring(equals + 1).strip());
            }
        }
        return result;
    }

    static String arg(Map<String, String> model, String key) {
        String value = model.get(key);
        if (value == null) {
            throw new IllegalArgumentException("model " + model.get("") + " needs " + key);
        }
        return value;
    }

    static double num(Map<String, String> model, String key) {
        return Double.parseDouble(arg(model, key));
    }

    static ARXPopulationModel population(Map<String, String> model, int records) {
        if (model.containsKey("population")) {
            return ARXPopulationModel.create((long) Double.parseDouble(model.get("population")));
        }
        if (model.containsKey("fraction")) {
            return ARXPopulationModel.create(records, Double.parseDouble(model.get("fraction")));
        }
        if (model.containsKey("region")) {
            return ARXPopulationModel.create(ARXPopulationModel.Region.valueOf(model.get("region")));
        }
        throw new IllegalArgumentException("model " + model.get("") + " needs population=N, fraction=f or region=R");
    }

    /** The privacy model of one model= line; data is the Data object the run anonymizes. */
    static PrivacyCriterion criterion(Map<String, String> m, Data data, Config config, ARXConfiguration arx,
                                      int records, char separator) throws IOException {
        String name = m.get("");
        switch (name) {
        case "k-anonymity":
            return new KAnonymity((int) num(m, "k"));
        case "distinct-l":
            return new DistinctLDiversity(arg(m, "attribute"), (int) num(m, "l"));
        case "entropy-l":
            return new EntropyLDiversity(arg(m, "attribute"), num(m, "l"));
        case "recursive-cl":
            return new RecursiveCLDiversity(arg(m, "attribute"), num(m, "c"), (int) num(m, "l"));
        case "equal-t":
            return new EqualDistanceTCloseness(arg(m, "attribute"), num(m, "t"));
        case "ordered-t":
            return new OrderedDistanceTCloseness(arg(m, "attribute"), num(m, "t"));
        case "hierarchical-t": {
            String attribute = arg(m, "attribute");
            String path = m.getOrDefault("hierarchy", config.get("hierarchy." + attribute, null));
            if (path == null) {
                throw new IllegalArgumentException("hierarchical-t needs hierarchy=path or hierarchy." + attribute);
            }
            Hierarchy hierarchy = Hierarchy.create(readCsv(path, separator));
            return new HierarchicalDistanceTCloseness(attribute, num(m, "t"), hierarchy);
        }
        case "basic-beta":
            return new BasicBLikeness(arg(m, "attribute"), num(m, "beta"));
        case "enhanced-beta":
            return new EnhancedBLikeness(arg(m, "attribute"), num(m, "beta"));
        case "delta-disclosure":
            return new DDisclosurePrivacy(arg(m, "attribute"), num(m, "delta"));
        case "average-risk":
            if (m.containsKey("highest") || m.containsKey("at_risk")) {
                return new AverageReidentificationRisk(num(m, "threshold"),
                                                       Double.parseDouble(m.getOrDefault("highest", "1")),
                                                       Double.parseDouble(m.getOrDefault("at_risk", "1")));
            }
            return new AverageReidentificationRisk(num(m, "threshold"));
        case "sample-uniqueness":
            return new SampleUniqueness(num(m, "threshold"));
        case "population-uniqueness":
            return new PopulationUniqueness(num(m, "threshold"),
                                            PopulationUniquenessModel.valueOf(m.getOrDefault("estimator", "DANKAR")),
                                            population(m, records));
        case "d-presence":
            return new DPresence(num(m, "dmin"), num(m, "dmax"),
                                 DataSubset.create(data, readFlags(arg(m, "subset"), records)));
        case "k-map":
            if (m.containsKey("subset")) {
                return new KMap((int) num(m, "k"), DataSubset.create(data, readFlags(m.get("subset"), records)));
            }
            return new KMap((int) num(m, "k"), num(m, "significance"), population(m, records),
                            KMap.CellSizeEstimator.valueOf(m.getOrDefault("estimator", "ZERO_TRUNCATED_POISSON")));
        case "ed-dp": {
            String scheme = m.getOrDefault("scheme", "MEDIUM");
            boolean deterministic = Boolean.parseBoolean(m.getOrDefault("deterministic", "false"));
            if (m.containsKey("search_budget")) {
                arx.setDPSearchBudget(num(m, "search_budget"));
            }
            if (m.containsKey("search_steps")) {
                arx.setHeuristicSearchStepLimit((int) num(m, "search_steps"));
            }
            DataGeneralizationScheme generalization = scheme.equals("data-dependent") ? null
                    : DataGeneralizationScheme.create(data, GeneralizationDegree.valueOf(scheme));
            return new EDDifferentialPrivacy(num(m, "epsilon"), num(m, "delta"), generalization, deterministic);
        }
        default:
            throw new IllegalArgumentException("unknown model: " + name);
        }
    }

    static Metric<?> metric(Config config) {
        String name = config.get("metric", "loss");
        double gsFactor = Double.parseDouble(config.get("gs_factor", "0.5"));
        switch (name) {
        case "loss":
            if (config.values.containsKey("aggregate")) {
                return Metric.createLossMetric(gsFactor, AggregateFunction.valueOf(config.get("aggregate", "")));
            }
            return Metric.createLossMetric(gsFactor);
        case "classification":
            return Metric.createClassificationMetric(gsFactor);
        case "entropy":
            return Metric.createEntropyMetric();
        case "normalized-entropy":
            return Metric.createNormalizedEntropyMetric();
        case "precision":
            return Metric.createPrecisionMetric();
        case "height":
            return Metric.createHeightMetric();
        case "discernibility":
            return Metric.createDiscernabilityMetric();
        case "aecs":
            return Metric.createAECSMetric();
        case "ambiguity":
            return Metric.createAmbiguityMetric();
        case "kl":
            return Metric.createKLDivergenceMetric();
        default:
            throw new IllegalArgumentException("unknown metric: " + name);
        }
    }

    /** A fresh Data object with the configuration's attribute types (ARX locks a Data after a run). */
    static Data prepare(Config config, List<String[]> rows, Map<String, Hierarchy> hierarchies,
                        List<String> qis, Set<String> sensitive, Set<String> targets) {
        Data data = Data.create(rows);
        for (String column : rows.get(0)) {
            if (qis.contains(column)) {
                data.getDefinition().setAttributeType(column, hierarchies.get(column));
            } else if (sensitive.contains(column)) {
                data.getDefinition().setAttributeType(column, AttributeType.SENSITIVE_ATTRIBUTE);
            } else {
                data.getDefinition().setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
            if (targets.contains(column)) {
                data.getDefinition().setResponseVariable(column, true);
            }
        }
        return data;
    }

    static List<String> list(String text) {
        List<String> result = new ArrayList<>();
        if (text != null) {
            for (String part : text.split(",")) {
                if (!part.isBlank()) {
                    result.add(part.strip());
                }
            }
        }
        return result;
    }

    static String json(String text) {
        StringBuilder builder = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                builder.append('\\').append(c);
            } else if (c < 0x20) {
                builder.append(String.format("\\u%04x", (int) c));
            } else {
                builder.append(c);
            }
        }
        return builder.append('"').toString();
    }

    static String number(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return "null";
        }
        return Double.toString(value);
    }

    static String run(Config config) throws Exception {
        char separator = config.get("separator", ";").charAt(0);
        List<String[]> rows = readCsv(config.require("data"), separator);
        int records = rows.size() - 1;
        List<String> qis = list(config.require("qi"));
        Set<String> sensitive = new HashSet<>(list(config.get("sensitive", null)));
        Set<String> targets = new HashSet<>(list(config.get("target", null)));
        Map<String, Hierarchy> hierarchies = new LinkedHashMap<>();
        for (String qi : qis) {
            String path = config.require("hierarchy." + qi);
            hierarchies.put(qi, Hierarchy.create(readCsv(path, separator)));
        }
        int repeats = Integer.parseInt(config.get("repeats", "5"));
        int warmup = Integer.parseInt(config.get("warmup", "2"));
        boolean readOutput = Boolean.parseBoolean(config.get("output", "false"));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<Double> cpu = new ArrayList<>();
        List<Double> wall = new ArrayList<>();
        List<Double> process = new ArrayList<>();
        com.sun.management.OperatingSystemMXBean system =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ARXResult result = null;
        Data data = null;
        for (int call = 0; call < warmup + repeats; call++) {
            if (data != null) {
                data.getHandle().release();
            }
            data = prepare(config, rows, hierarchies, qis, sensitive, targets);
            ARXConfiguration arx = ARXConfiguration.create();
            for (String text : config.models) {
                arx.addPrivacyModel(criterion(parseModel(text), data, config, arx, records, separator));
            }
            arx.setSuppressionLimit(Double.parseDouble(config.get("suppression", "0")));
            arx.setQualityModel(metric(config));
            for (Map.Entry<String, String> entry : config.values.entrySet()) {
                if (entry.getKey().startsWith("weight.")) {
                    arx.setAttributeWeight(entry.getKey().substring(7), Double.parseDouble(entry.getValue()));
                }
            }
            ARXAnonymizer anonymizer = new ARXAnonymizer();
            long cpuStart = threads.getCurrentThreadCpuTime();
            long processStart = system.getProcessCpuTime();
            long wallStart = System.nanoTime();
            result = anonymizer.anonymize(data, arx);
            if (readOutput) {
                cellSink += readEveryCell(result);
            }
            long cpuEnd = threads.getCurrentThreadCpuTime();
            long processEnd = system.getProcessCpuTime();
            long wallEnd = System.nanoTime();
            if (call >= warmup) {
                cpu.add((cpuEnd - cpuStart) / 1e9);
                process.add((processEnd - processStart) / 1e9);
                wall.add((wallEnd - wallStart) / 1e9);
            }
        }
        return report(config, result, qis, cpu, wall, process);
    }

    /** Characters read by readEveryCell, kept so that the JIT cannot drop the reads. */
    static long cellSink = 0;

    /** The optimum's output table (no fork: ARX's own buffer, as the report reads it), every cell read. */
    static long readEveryCell(ARXResult result) {
        if (result.getGlobalOptimum() == null) {
            return 0;
        }
        DataHandle output = result.getOutput(false);
        long characters = 0;
        int columns = output.getNumColumns();
        for (int row = 0; row < output.getNumRows(); row++) {
            for (int column = 0; column < columns; column++) {
                characters += output.getValue(row, column).length();
            }
        }
        return characters;
    }

    static String report(Config config, ARXResult result, List<String> qis, List<Double> cpu, List<Double> wall,
                         List<Double> process) {
        StringBuilder out = new StringBuilder("{");
        out.append("\"name\": ").append(json(config.get("name", ""))).append(", ");
        out.append("\"models\": [");
        for (int i = 0; i < config.models.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(json(config.models.get(i)));
        }
        out.append("], ");
        out.append("\"suppression\": ").append(config.get("suppression", "0")).append(", ");
        out.append("\"metric\": ").append(json(config.get("metric", "loss"))).append(", ");
        out.append("\"output\": ").append(Boolean.parseBoolean(config.get("output", "false"))).append(", ");
        out.append("\"quasi_identifiers\": [");
        for (int i = 0; i < qis.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(json(qis.get(i)));
        }
        out.append("], ");
        ARXNode optimum = result.getGlobalOptimum();
        if (optimum == null) {
            out.append("\"found\": false, \"levels\": null, \"loss\": null, \"loss_relative\": null, ");
        } else {
            out.append("\"found\": true, \"levels\": ").append(Arrays.toString(optimum.getTransformation())).append(", ");
            InformationLoss<?> loss = optimum.getHighestScore();
            out.append("\"loss\": ").append(json(String.valueOf(loss))).append(", ");
            Double relative = null;
            try {
                InformationLoss<?> bottom = result.getLattice().getBottom().getLowestScore();
                InformationLoss<?> top = result.getLattice().getTop().getHighestScore();
                relative = loss.relativeTo(bottom, top);
            } catch (RuntimeException error) {
                relative = null;
            }
            out.append("\"loss_relative\": ").append(relative == null ? "null" : number(relative)).append(", ");
            DataHandle output = result.getOutput(optimum, false);
            int suppressed = 0;
            for (int row = 0; row < output.getNumRows(); row++) {
                if (output.isOutlier(row)) {
                    suppressed++;
                }
            }
            out.append("\"suppressed\": ").append(suppressed).append(", ");
            out.append("\"classes\": ")
               .append(output.getStatistics().getEquivalenceClassStatistics().getNumberOfEquivalenceClasses())
               .append(", ");
        }
        out.append("\"nodes_checked\": ").append(result.getProcessStatistics().getTransformationsChecked()).append(", ");
        out.append("\"lattice_size\": ").append(result.getLattice().getSize()).append(", ");
        out.append("\"cpu_seconds\": ").append(cpu).append(", ");
        double mean = cpu.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        double[] sorted = cpu.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double median = sorted.length == 0 ? Double.NaN
                : (sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                        : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2);
        out.append("\"cpu_seconds_mean\": ").append(number(mean)).append(", ");
        out.append("\"cpu_seconds_median\": ").append(number(median)).append(", ");
        out.append("\"process_cpu_seconds\": ").append(process).append(", ");
        out.append("\"wall_seconds\": ").append(wall);
        return out.append("}").toString();
    }
}
