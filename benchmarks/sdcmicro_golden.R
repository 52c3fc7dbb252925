# Golden outputs of the real sdcMicro (5.8.1) for sdckit's equivalents (issue 37).
#
# A tool to regenerate tests/data/sdcmicro_golden/*.json, not run by the tests (R is not a test
# dependency). It reads the same CSV files as the Python tests (../shared/data/sdcmicro), so both
# sides start from identical numbers, and writes one small JSON file per case: the call, the group
# labels of the output (records with identical output rows share a label, numbered by first
# occurrence), the first rows of the output rounded to 1e-9 and the column sums.
#
# Usage (from the repository root, sdcMicro installed, e.g. in R_LIBS_USER=/tmp/Rlib):
#   Rscript benchmarks/sdcmicro_golden.R [DATA_DIR] [OUT_DIR]
# Randomized methods (rmd's and mcdpca's MCD) run after set.seed(1): their outputs are R's, which
# sdckit (numpy / scikit-learn generators) cannot reproduce draw for draw.

suppressMessages(library(sdcMicro))
suppressMessages(library(jsonlite))

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else "../shared/data/sdcmicro"
out_dir <- if (length(args) >= 2) args[2] else "tests/data/sdcmicro_golden"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

read_data <- function(name) {
  read.csv(file.path(data_dir, name), check.names = FALSE)
}

row_labels <- function(m) {
  key <- do.call(paste, c(lapply(as.data.frame(m), function(v) sprintf("%.10g", v)), sep = "|"))
  match(key, unique(key))
}

write_case <- function(case, call, m, extra = list()) {
  m <- as.matrix(m)
  storage.mode(m) <- "double"
  out <- c(list(
    case = case,
    sdcmicro_version = as.character(packageVersion("sdcMicro")),
    call = call,
    columns = colnames(m),
    n = nrow(m),
    labels = row_labels(m),
    n_groups = length(unique(row_labels(m))),
    head = unname(round(m[seq_len(min(10, nrow(m))), , drop = FALSE], 9)),
    column_sums = unname(round(colSums(m), 6))
  ), extra)
  path <- file.path(out_dir, paste0(case, ".json"))
  writeLines(toJSON(out, digits = NA, auto_unbox = TRUE), path)
  cat("wrote", path, "\n")
}

datasets <- list(casc = "CASCrefmicrodata.csv", tarragona = "Tarragona.csv")

for (ds in names(datasets)) {
  x <- read_data(datasets[[ds]])
  vars <- colnames(x)
  # deterministic methods, measure mean
  for (method in c("mdav", "simple", "single", "onedims", "pca", "pppca")) {
    r <- microaggregation(x, variables = vars, aggr = 3, method = method)
    write_case(
      sprintf("micro_%s_%s", ds, method),
      sprintf("microaggregation(x, aggr=3, method='%s')", method), r$mx[, vars]
    )
  }
  # the other measures on the sorting methods
  for (method in c("simple", "single", "pca")) {
    for (measure in c("median", "trim", "onestep")) {
      trim <- if (measure == "trim") 0.1 else 0
      r <- microaggregation(x, variables = vars, aggr = 3, method = method, measure = measure, trim = trim)
      write_case(
        sprintf("micro_%s_%s_%s", ds, method, measure),
        sprintf("microaggregation(x, aggr=3, method='%s', measure='%s', trim=%g)", method, measure, trim),
        r$mx[, vars]
      )
    }
  }
  # mdav within strata: the first column split at its median (stratum 1: at most the median)
  xs <- x
  xs$S <- ifelse(x[[1]] <= median(x[[1]]), 1L, 2L)
  r <- microaggregation(xs, variables = vars, aggr = 3, method = "mdav", strata_variables = "S")
  write_case(
    sprintf("micro_%s_mdav_strata", ds),
    "microaggregation(x + S, aggr=3, method='mdav', strata_variables='S'), S = 1 + (x[[1]] > median(x[[1]]))",
    r$mx[, vars], list(strata = xs$S)
  )
  # randomized: the MCD of rmd and mcdpca (R's generator)
  for (method in c("rmd", "mcdpca")) {
    set.seed(1)
    case <- sprintf("micro_%s_%s_seed1", ds, method)
    call <- sprintf("set.seed(1); microaggregation(x, aggr=3, method='%s')", method)
    r <- tryCatch(microaggregation(x, variables = vars, aggr = 3, method = method), error = identity)
    if (inherits(r, "error")) {
      # sdcMicro stops (e.g. a singular MCD scatter): record the message
      out <- list(case = case, sdcmicro_version = as.character(packageVersion("sdcMicro")),
                  call = call, error = conditionMessage(r))
      writeLines(toJSON(out, auto_unbox = TRUE), file.path(out_dir, paste0(case, ".json")))
      cat("recorded error for", case, "\n")
    } else {
      write_case(case, call, r$mx[, vars])
    }
  }
}

# Figures of a microaggregated file: summary.micro (its dRiskRMD draws an MCD: set.seed(1)), dRisk,
# dUtility, IL_correl, IL_variables of the original against microaggregation(method=...)'s output.
scalar_or_error <- function(expr) {
  value <- tryCatch(expr, error = identity)
  if (inherits(value, "error")) list(error = conditionMessage(value)) else value
}
for (ds in names(datasets)) {
  x <- read_data(datasets[[ds]])
  vars <- colnames(x)
  for (method in c("mdav", "pca")) {
    x <- read_data(datasets[[ds]])  # afresh: IL_variables turns its arguments into data.tables in place
    r <- microaggregation(x, variables = vars, aggr = 3, method = method)
    xm <- as.data.frame(r$mx[, vars])
    set.seed(1)
    s <- scalar_or_error(summary(r))
    if (is.null(s$error)) {
      s <- s[setdiff(names(s), c("meansx", "meansxm", "totalsOrig", "totalsMicro"))]
      s <- lapply(s, function(v) if (is.numeric(v)) unname(v) else as.character(v))
    }
    out <- list(
      case = sprintf("figures_%s_%s", ds, method),
      sdcmicro_version = as.character(packageVersion("sdcMicro")),
      call = sprintf("r <- microaggregation(x, aggr=3, method='%s'); xm <- r$mx; set.seed(1); summary(r); ...", method),
      summary_micro = s,
      dRisk_0.05 = dRisk(x, xm, k = 0.05),
      dRisk_0.01 = dRisk(x, xm, k = 0.01),
      dUtility_IL1 = dUtility(x, xm, method = "IL1"),
      dUtility_IL1s = dUtility(x, xm, method = "IL1s"),
      dUtility_IL1old = dUtility(x, xm, method = "IL1old"),
      dUtility_eigen = dUtility(x, xm, method = "eigen"),
      IL_correl = scalar_or_error(IL_correl(x, xm)),
      # IL_variables stops ("invalid argument type") when a column is integer in x and double in xm
      # (its `!all.equal(...)` of the class names): the original is given as doubles
      IL_variables = scalar_or_error(IL_variables(as.data.frame(lapply(x, as.numeric)), xm))
    )
    path <- file.path(out_dir, paste0(out$case, ".json"))
    writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, force = TRUE), path)
    cat("wrote", path, "\n")
  }
}

# Risk on testdata: measure_risk (keys, sampling weights, households, max_global_risk) and modRisk
# (every method, with and without bound). Per-record vectors: fk and Fk in full, the individual
# risk's first rows, sum and maximum.
td <- read_data("testdata.csv")
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
write_json_case <- function(out) {
  out <- c(list(sdcmicro_version = as.character(packageVersion("sdcMicro"))), out)
  path <- file.path(out_dir, paste0(out$case, ".json"))
  writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, force = TRUE), path)
  cat("wrote", path, "\n")
}
for (mgr in c(0.01, 0.001)) {
  r <- measure_risk(td, keyVars = keys, w = "sampling_weight", max_global_risk = mgr)
  rh <- measure_risk(td, keyVars = keys, w = "sampling_weight", hid = "ori_hid", max_global_risk = mgr)
  write_json_case(list(
    case = sprintf("risk_testdata_measure_risk_%g", mgr),
    call = sprintf(
      "measure_risk(testdata, keyVars=c(%s), w='sampling_weight', max_global_risk=%g) (and hid='ori_hid')",
      paste0("'", keys, "'", collapse = ","), mgr
    ),
    keys = keys,
    fk = as.integer(r$Res[, "fk"]),
    Fk = unname(r$Res[, "Fk"]),
    risk_head = unname(round(r$Res[1:20, "risk"], 12)),
    risk_sum = sum(r$Res[, "risk"]),
    risk_max = max(r$Res[, "risk"]),
    global_risk = r$global_risk,
    global_risk_ER = r$global_risk_ER,
    global_threshold = r$global_threshold,
    hier_risk_head = unname(round(rh$Res[1:20, "hier_risk"], 12)),
    hier_risk_sum = sum(rh$Res[, "hier_risk"]),
    hier_risk_ER = rh$hier_risk_ER,
    hier_risk = rh$hier_risk
  ))
}
# modRisk's glm takes a numeric key as one linear covariate (IPF's xtabs as categories): run it on the
# keys as factors (categories, as sdckit's keys) and as read (integer codes)
form <- ~ roof + walls + water + electcon + sex
td_factors <- td
for (v in all.vars(form)) td_factors[[v]] <- factor(td_factors[[v]])
mod_runs <- function(data) {
  mod <- list()
  for (method in c("default", "CE", "PML", "weightedLLM", "IPF")) {
    for (bound in c(Inf, 5)) {
      m <- scalar_or_error(modRisk(data, method = method, weights = "sampling_weight", formulaM = form, bound = bound))
      mod[[sprintf("%s_%s", method, bound)]] <- if (!is.null(m$error)) m else list(gr1 = m$gr1, gr2 = m$gr2)
    }
  }
  mod
}
write_json_case(list(
  case = "risk_testdata_modrisk",
  call = "modRisk(testdata, method=..., weights='sampling_weight', formulaM=~roof+walls+water+electcon+sex, bound=Inf or 5)",
  formula = "roof + walls + water + electcon + sex",
  results = mod_runs(td_factors),
  results_integer_codes = mod_runs(td)
))

# globalRecode of numeric vectors: number of intervals by equidistant, logEqui, equalAmount (its
# jitter of tied quantiles is random: set.seed(1)), and explicit breaks with labels. Recorded: the
# levels and each record's level number.
md5_of <- function(text) {
  path <- tempfile()
  writeChar(text, path, eos = NULL)
  unname(tools::md5sum(path))
}
# a factor as its levels, each level's count, the first 20 level numbers and the MD5 of all of them
# (comma-separated, NA for missing)
coded <- function(g) {
  codes <- as.integer(g)
  list(levels = I(levels(g)), counts = I(as.integer(table(factor(codes, levels = seq_along(levels(g)))))),
       missing = sum(is.na(codes)), head = codes[1:20],
       codes_md5 = md5_of(paste(ifelse(is.na(codes), "NA", codes), collapse = ",")))
}
recode_runs <- list()
free1 <- read_data("free1.csv")
columns <- list(testdata_age = td$age, testdata_expend = td$expend, testdata_income = td$income,
                testdata_savings = td$savings, free1_AGE = free1$AGE)
for (name in names(columns)) {
  v <- columns[[name]]
  for (method in c("equidistant", "logEqui", "equalAmount")) {
    for (n in c(1, 3, 6, 10)) {
      set.seed(1)
      g <- scalar_or_error(suppressWarnings(globalRecode(v, breaks = n, method = method)))
      key <- sprintf("%s_%s_%d", name, method, n)
      recode_runs[[key]] <- if (is.list(g) && !is.null(g$error)) g else
        coded(g)
    }
  }
}
g <- globalRecode(free1$AGE, breaks = c(1, 9, 19, 29, 39, 49, 59, 69, 100), labels = 1:8)
recode_runs[["free1_AGE_breaks_labels"]] <- c(list(
  breaks = c(1, 9, 19, 29, 39, 49, 59, 69, 100), labels = as.character(1:8)), coded(g)
)
g <- globalRecode(free1$AGE, breaks = c(1, 9, 19, 29, 39, 49, 59, 69, 100))
recode_runs[["free1_AGE_breaks"]] <- c(list(
  breaks = c(1, 9, 19, 29, 39, 49, 59, 69, 100)), coded(g)
)
write_json_case(list(case = "recode_global", call = "globalRecode(v, breaks=n, method=...) after set.seed(1)",
                     runs = recode_runs))

# ldiversity on testdata: distinct, entropy and recursive (c = 2 and 3) l-diversity of two sensitive
# attributes per record (the multi-attribute columns too, which sdckit does not compute).
ldiv_keys <- c("urbrur", "roof", "walls", "sex")
ldiv_runs <- list()
for (cc in c(2, 3)) {
  l <- ldiversity(td, keyVars = ldiv_keys, ldiv_index = c("relat", "hhcivil"), l_recurs_c = cc)
  ldiv_runs[[sprintf("c%g", cc)]] <- lapply(as.data.frame(unclass(l)), function(v) {
    list(head = round(v[1:20], 12), sum = sum(v), md5 = md5_of(paste(sprintf("%.9f", v), collapse = ",")))
  })
}
write_json_case(list(
  case = "risk_testdata_ldiversity",
  call = "ldiversity(testdata, keyVars=c('urbrur','roof','walls','sex'), ldiv_index=c('relat','hhcivil'), l_recurs_c=2 or 3)",
  keys = ldiv_keys, sensitive = c("relat", "hhcivil"), runs = ldiv_runs
))

# localSuppression (k-anonymity by suppression; default importance, with strata, with combs) and
# localSupp (threshold on the individual risk) on testdata. Recorded per key: the suppressed records
# (count and MD5 of their 1-based numbers, comma-separated).
suppressed <- function(before, after, keys) {
  lapply(setNames(keys, keys), function(v) {
    rows <- which(is.na(after[[v]]) & !is.na(before[[v]]))
    list(count = length(rows), head = I(head(rows, 10)), md5 = md5_of(paste(rows, collapse = ",")))
  })
}
supp_runs <- list()
td_keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
for (k in c(2, 3, 5)) {
  r <- localSuppression(td, k = k, keyVars = td_keys)
  supp_runs[[sprintf("k%d", k)]] <- list(k = k, keys = td_keys, cells = suppressed(td, r$xAnon, td_keys))
}
strata_keys <- setdiff(td_keys, "urbrur")
r <- localSuppression(td, k = 3, keyVars = strata_keys, strataVars = "urbrur")
supp_runs[["k3_strata_urbrur"]] <- list(k = 3, keys = strata_keys, strata = "urbrur",
                                        cells = suppressed(td, r$xAnon, strata_keys))
r <- localSuppression(td, k = c(5, 3), keyVars = td_keys, combs = c(3, 7))
supp_runs[["combs_3_7_k5_3"]] <- list(k = I(c(5, 3)), combs = I(c(3, 7)), keys = td_keys,
                                      cells = suppressed(td, r$xAnon, td_keys))
r <- localSuppression(td, k = 3, keyVars = td_keys, importance = c(1, 2, 3, 4, 5, 7, 6))
supp_runs[["k3_importance"]] <- list(k = 3, keys = td_keys, importance = I(c(1, 2, 3, 4, 5, 7, 6)),
                                     cells = suppressed(td, r$xAnon, td_keys))
fc <- freqCalc(td, keyVars = td_keys, w = "sampling_weight")
for (threshold in c(0.01, 0.02)) {
  r <- suppressMessages(localSupp(fc, threshold = threshold, keyVar = "relat"))
  supp_runs[[sprintf("localSupp_relat_%g", threshold)]] <- list(
    threshold = threshold, keys = td_keys, keyVar = "relat",
    cells = suppressed(td, r$freqCalc, "relat")
  )
}
write_json_case(list(case = "suppression_testdata", call = "localSuppression(testdata, k, keyVars, ...) / localSupp(freqCalc(...), threshold, 'relat')",
                     runs = supp_runs))

# recordLinkage (Gower, one-to-one Hungarian assignment with clue::solve_LSAP) of the original with a
# release: CASC's mdav output (groups of identical records: many optimal assignments) and Tarragona
# with a deterministic offset ((i * 7919) %% 1001 - 500 on every value of record i, no ties).
link_runs <- list()
casc <- read_data("CASCrefmicrodata.csv")
casc_m <- as.data.frame(microaggregation(casc, variables = colnames(casc), aggr = 3, method = "mdav")$mx)
tarr <- read_data("Tarragona.csv")
offset <- ((seq_len(nrow(tarr)) * 7919) %% 1001) - 500
tarr_m <- tarr + offset
link_cases <- list(
  casc_mdav = list(x = casc, y = casc_m, vars = colnames(casc)[1:6], weights = NULL),
  casc_mdav_weighted = list(x = casc, y = casc_m, vars = colnames(casc)[1:6], weights = c(1, 2, 1, 3, 1, 2)),
  tarragona_offset = list(x = tarr, y = tarr_m, vars = colnames(tarr)[1:5], weights = NULL),
  tarragona_offset_weighted = list(x = tarr, y = tarr_m, vars = colnames(tarr)[1:5], weights = c(3, 1, 1, 2, 1))
)
for (name in names(link_cases)) {
  lc <- link_cases[[name]]
  r <- recordLinkage(lc$x, lc$y, vars = lc$vars, distance = "gower", weights = lc$weights)
  link_runs[[name]] <- list(
    vars = lc$vars, weights = lc$weights,
    correct_matches = r$correct_matches, correct_match_rate = r$correct_match_rate,
    mean_distance = r$mean_distance, total_distance = r$total_distance,
    n_best_sum = sum(r$matches$n_best), n_best_head = I(r$matches$n_best[1:20]),
    y_row_md5 = md5_of(paste(r$matches$y_row, collapse = ","))
  )
}
write_json_case(list(case = "linkage_gower", call = "recordLinkage(x, y, vars, distance='gower', weights)",
                     offset = "((i * 7919) %% 1001) - 500, i = 1..n", runs = link_runs))

# measure_risk with missing key values (water missing in every 50th record, roof in every 75th) and
# freqCalc's alpha (1, 0.5, 0): fk and Fk in full, the risk's first rows and sum.
td_na <- td
td_na$water[seq(50, nrow(td_na), 50)] <- NA
td_na$roof[seq(75, nrow(td_na), 75)] <- NA
alpha_runs <- list()
for (a in c(1, 0.5, 0)) {
  # measure_risk's data.frame method cannot take alpha (it passes alpha twice: "formal argument
  # 'alpha' matched by multiple actual arguments"): its worker is called directly
  r <- sdcMicro:::measure_riskWORK(td_na, keyVars = keys, w = "sampling_weight", alpha = a)
  alpha_runs[[sprintf("alpha_%g", a)]] <- list(
    alpha = a, fk = unname(r$Res[, "fk"]), Fk = unname(r$Res[, "Fk"]),
    risk_head = unname(round(r$Res[1:20, "risk"], 12)), risk_sum = sum(r$Res[, "risk"]),
    global_risk = r$global_risk
  )
}
write_json_case(list(case = "risk_testdata_missing_alpha", keys = keys,
                     call = "sdcMicro:::measure_riskWORK(testdata with water NA every 50th and roof NA every 75th record, keyVars, w='sampling_weight', alpha=a)",
                     runs = alpha_runs))
