/*
 * ARX 3.9.2's population-uniqueness figures for given class-size histograms (issue 38, engineer SN).
 *
 * Build and run (it sits in ARX's package to reach the package-private ModelPitman / ModelSNB):
 *
 *   javac -cp "$(cat /tmp/arx/classpath.txt)" -d /tmp/arx_sn benchmarks/arx/PopulationFigures.java
 *   java -cp "/tmp/arx_sn:$(cat /tmp/arx/classpath.txt)" org.deidentifier.arx.risk.PopulationFigures < in.txt
 *
 * Input: one histogram a line, "POPULATION SIZE:COUNT SIZE:COUNT ..." (POPULATION: the population
 * size, ARXPopulationModel.create(N)). Output: one JSON line each with
 *   pitman, zayatz, snb, dankar           RiskModelPopulationUniqueness's numbers of population uniques
 *                                         (0 when a model gives no estimate, as ARX returns them);
 *   dankar_criterion                      getNumUniqueTuplesDankar(false): what ARX's PopulationUniqueness
 *                                         criterion uses (no Zayatz fallback when Pitman fails);
 *   snb_k, snb_alpha, snb_beta            ModelSNB's Shlosser K and the (alpha, beta) ARX's solver returns,
 *   snb_residual                          ARX's own SNB object function at that point,
 *   snb_iterations, snb_tries, snb_ms     NewtonRaphsonMeasures of that solve;
 *   pitman_theta, pitman_alpha, ...       the same for Pitman (closed form, and the iterative check).
 * The solver runs with ARX's default ARXSolverConfiguration (accuracy 1e-6, 1000 iterations a try,
 * 10000 in all, 100 ms a try, 1000 ms in all, 16 prepared start values) exactly as ModelSNB and
 * ModelPitman call it; the private functions are reached by reflection, nothing is re-implemented.
 */
package org.deidentifier.arx.risk;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.util.Locale;

import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.ARXSolverConfiguration;
import org.deidentifier.arx.common.WrappedBoolean;

import com.carrotsearch.hppc.IntIntOpenHashMap;

import de.linearbits.newtonraphson.Constraint2D;
import de.linearbits.newtonraphson.Function;
import de.linearbits.newtonraphson.NewtonRaphson2D;
import de.linearbits.newtonraphson.NewtonRaphsonMeasures;
import de.linearbits.newtonraphson.Pair;
import de.linearbits.newtonraphson.SquareMatrix2D;
import de.linearbits.newtonraphson.Vector2D;

public class PopulationFigures {

    static String num(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) return "null";
        return String.format(Locale.ROOT, "%.17g", value);
    }

    static Method method(Class<?> type, String name, Class<?>... parameters) throws Exception {
        Method result = type.getDeclaredMethod(name, parameters);
        result.setAccessible(true);
        return result;
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        BufferedReader reader = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = reader.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("#")) continue;
            String[] parts = line.split("\\s+");
            long population = (long) Double.parseDouble(parts[0]);
            IntIntOpenHashMap distribution = new IntIntOpenHashMap();
            for (int i = 1; i < parts.length; i++) {
                String[] pair = parts[i].split(":");
                distribution.putOrAdd(Integer.parseInt(pair[0]), Integer.parseInt(pair[1]), Integer.parseInt(pair[1]));
            }
            RiskModelHistogram histogram = new RiskModelHistogram(distribution);
            ARXPopulationModel model = ARXPopulationModel.create(population);
            ARXSolverConfiguration config = ARXSolverConfiguration.create();
            StringBuilder out = new StringBuilder("{");

            RiskModelPopulationUniqueness risk = new RiskModelPopulationUniqueness(model, histogram, config);
            out.append("\"pitman\": ").append(num(risk.getNumUniqueTuplesPitman()));
            out.append(", \"zayatz\": ").append(num(risk.getNumUniqueTuplesZayatz()));
            out.append(", \"snb\": ").append(num(risk.getNumUniqueTuplesSNB()));
            out.append(", \"dankar\": ").append(num(risk.getNumUniqueTuplesDankar()));
            RiskModelPopulationUniqueness criterion = new RiskModelPopulationUniqueness(model, histogram, config);
            out.append(", \"dankar_criterion\": ").append(num(criterion.getNumUniqueTuplesDankar(false)));

            // SNB: ModelSNB's own functions, solved as ModelSNB solves them
            ModelSNB snb = new ModelSNB(model, histogram, config, new WrappedBoolean());
            int[] h = histogram.getHistogram();
            double c1 = 0, c2 = 0;
            for (int i = 0; i < h.length; i += 2) {
                if (h[i] == 1) c1 = h[i + 1];
                if (h[i] == 2) c2 = h[i + 1];
            }
            double f = histogram.getNumRecords() / (double) population;
            double k = (Double) method(ModelSNB.class, "estimateNonEmptyEquivalenceClasses", int[].class,
                                       double.class, double.class, double.class)
                    .invoke(snb, h, histogram.getNumClasses(), c1, f);
            Function<Vector2D, Vector2D> object = (Function<Vector2D, Vector2D>) method(ModelSNB.class,
                    "getObjectFunction", double.class, double.class, double.class, double.class)
                    .invoke(snb, k, f, c1, c2);
            Function<Vector2D, SquareMatrix2D> derivatives = (Function<Vector2D, SquareMatrix2D>) method(
                    ModelSNB.class, "getDerivatives", double.class, double.class, double.class, double.class)
                    .invoke(snb, k, f, c1, c2);
            NewtonRaphson2D solver = new NewtonRaphson2D(object, derivatives).configure(config);
            Vector2D result = solver.solve();
            NewtonRaphsonMeasures measures = solver.getMeasures();
            out.append(", \"snb_k\": ").append(num(k));
            out.append(", \"snb_alpha\": ").append(num(result.x));
            out.append(", \"snb_beta\": ").append(num(result.y));
            if (!Double.isNaN(result.x)) {
                Vector2D residual = object.evaluate(result.clone());
                out.append(", \"snb_residual\": [").append(num(residual.x)).append(", ").append(num(residual.y)).append("]");
            }
            out.append(", \"snb_iterations\": ").append(measures.getIterations());
            out.append(", \"snb_tries\": ").append(measures.getTries());
            out.append(", \"snb_ms\": ").append(measures.getTime());

            // Pitman: the closed form from ModelPitman's start, then its iterative check
            if (c1 > 0) {
                ModelPitman pitman = new ModelPitman(model, histogram, config, new WrappedBoolean());
                double u = histogram.getNumClasses(), n = histogram.getNumRecords();
                double cc2 = c2 != 0 ? c2 : 1;
                double c = (c1 * (c1 - 1)) / cc2;
                double t = ((n * u * c) - (c1 * (n - 1) * ((2 * u) + c))) / (((2 * c1 * u) + (c1 * c)) - (n * c));
                double a = ((t * (c1 - n)) + ((n - 1) * c1)) / (n * u);
                Constraint2D constraint = (Constraint2D) method(ModelPitman.class, "getConstraint").invoke(pitman);
                Function<Vector2D, Pair<Vector2D, SquareMatrix2D>> closed =
                        (Function<Vector2D, Pair<Vector2D, SquareMatrix2D>>) method(ModelPitman.class,
                        "getMasterFunctionClosed", int[].class, double.class, double.class).invoke(pitman, h, u, n);
                Function<Vector2D, Vector2D> check = (Function<Vector2D, Vector2D>) method(ModelPitman.class,
                        "getObjectFunctionsIterative", int[].class, double.class, double.class).invoke(pitman, h, u, n);
                NewtonRaphson2D psolver = new NewtonRaphson2D(closed, constraint).configure(config);
                Vector2D presult = psolver.solve(new Vector2D(t, a));
                out.append(", \"pitman_start\": [").append(num(t)).append(", ").append(num(a)).append("]");
                out.append(", \"pitman_theta\": ").append(num(presult.x));
                out.append(", \"pitman_alpha\": ").append(num(presult.y));
                out.append(", \"pitman_iterations\": ").append(psolver.getMeasures().getIterations());
                out.append(", \"pitman_tries\": ").append(psolver.getMeasures().getTries());
                out.append(", \"pitman_ms\": ").append(psolver.getMeasures().getTime());
                if (!Double.isNaN(presult.x)) {
                    Vector2D residual = check.evaluate(presult.clone());
                    out.append(", \"pitman_residual_iterative\": [").append(num(residual.x)).append(", ")
                       .append(num(residual.y)).append("]");
                }
            }
            out.append("}");
            System.out.println(out);
        }
    }
}
