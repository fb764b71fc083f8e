package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;
import org.yaml.snakeyaml.Yaml;

/**
 * Monitoring as resources ({@code k8s/monitoring}): the PrometheusRule's rules pass {@code promtool check
 * rules} (Debian's prometheus package, installed when missing), each alert carries a runbook line, and every
 * metric a rule or a dashboard panel names is exported by the running service after some traffic.
 */
@TestPropertySource(properties = OpsConsoleBrowserTest.PROPERTIES)
class MonitoringResourcesTest extends IntegrationTest {

    static final Path RULE = Path.of("k8s/monitoring/prometheusrule.yaml");
    static final Path DASHBOARD = Path.of("k8s/monitoring/grafana-dashboard.json");
    static final Pattern METRIC = Pattern.compile("\\b((?:adapter|camel|http_server|jvm|hikaricp)_[a-z0-9_]+)\\b");

    @Test
    @SuppressWarnings("unchecked")
    void theAlertRulesPassPromtoolAndEachHasARunbook() throws Exception {
        Map<String, Object> rule = new Yaml().load(Files.readString(RULE));
        assertThat(rule.get("kind")).isEqualTo("PrometheusRule");
        Path rules = Files.createTempFile("rules", ".yaml");
        Files.writeString(rules, new Yaml().dump(rule.get("spec")));
        Process check = new ProcessBuilder(promtool(), "check", "rules", rules.toString()).redirectErrorStream(true).start();
        String out = new String(check.getInputStream().readAllBytes());
        assertThat(check.waitFor()).as(out).isZero();
        assertThat(out).contains("SUCCESS: 30 rules found");
        // every series a rule reads is the prod overlay's namespace's: another environment scraped by the same
        // Prometheus neither raises nor hides an alert
        String namespace = ((Map<String, Object>) new Yaml().load(Files.readString(Path.of("k8s/overlays/prod/kustomization.yaml"))))
                .get("namespace").toString();
        java.util.regex.Pattern selector = java.util.regex.Pattern.compile("\\b(adapter_\\w+|camel_\\w+)(\\{[^}]*\\})?");
        for (Map<String, Object> group : (Iterable<Map<String, Object>>) ((Map<String, Object>) rule.get("spec")).get("groups")) {
            for (Map<String, Object> alert : (Iterable<Map<String, Object>>) group.get("rules")) {
                java.util.regex.Matcher m = selector.matcher(String.valueOf(alert.get("expr")));
                while (m.find()) {
                    assertThat(m.group(2)).as(alert.get("alert") + " " + alert.get("record") + ": " + m.group())
                            .isNotNull().contains("namespace=\"" + namespace + "\"");
                }
                if (alert.get("record") != null) {
                    continue;
                }
                Map<String, Object> annotations = (Map<String, Object>) alert.get("annotations");
                assertThat((String) annotations.get("runbook")).as(alert.get("alert") + " runbook").isNotBlank();
                assertThat((String) annotations.get("summary")).as(alert.get("alert") + " summary").isNotBlank();
            }
        }
        // the prod overlay deploys them; the dashboard ConfigMap is labelled for the Grafana sidecar
        assertThat(Files.readString(Path.of("k8s/overlays/prod/kustomization.yaml"))).contains("../../monitoring");
        assertThat(Files.readString(Path.of("k8s/monitoring/kustomization.yaml"))).contains("grafana_dashboard: \"1\"");
    }

    /**
     * The dashboard shows one namespace at a time ({@code $namespace}, first the prod overlay's): a dev namespace
     * scraped by the same Prometheus would otherwise be added into prod's rates and maxima. Every panel's query
     * selects it and parses in promtool (each query checked as a recording rule, the variable substituted).
     */
    @Test
    @SuppressWarnings("unchecked")
    void everyDashboardQueryReadsTheChosenNamespaceAndParses() throws Exception {
        String namespace = ((Map<String, Object>) new Yaml().load(Files.readString(Path.of("k8s/overlays/prod/kustomization.yaml"))))
                .get("namespace").toString();
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        JsonNode variable = null;
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.path("name").asText().equals("namespace")) {
                variable = v;
            }
        }
        assertThat(variable).as("a namespace variable").isNotNull();
        assertThat(variable.path("current").path("value").asText()).isEqualTo(namespace);
        assertThat(variable.path("definition").asText()).contains("namespace");

        Pattern selector = Pattern.compile("\\b((?:adapter|camel)_\\w+)(\\{[^}]*\\})?");
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int queries = 0;
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asText();
                Matcher m = selector.matcher(expr);
                while (m.find()) {
                    assertThat(m.group(2)).as(panel.path("title").asText() + ": " + m.group())
                            .isNotNull().contains("namespace=\"$namespace\"");
                }
                rules.append("      - record: dashboard:query").append(++queries).append(":check\n        expr: '")
                        .append(expr.replace("$namespace", namespace).replace("'", "''")).append("'\n");
            }
        }
        assertThat(queries).isGreaterThan(10);
        Path file = Files.createTempFile("dashboard", ".yaml");
        Files.writeString(file, rules);
        Process check = new ProcessBuilder(promtool(), "check", "rules", file.toString()).redirectErrorStream(true).start();
        String out = new String(check.getInputStream().readAllBytes());
        assertThat(check.waitFor()).as(out).isZero();
        assertThat(out).contains("SUCCESS: " + queries + " rules found");
    }

    /**
     * {@code k8s/monitoring/tests/prometheusrule-test.yaml} with {@code promtool test rules}: every alert of the
     * PrometheusRule is made to fire and to stay quiet there, and the tests pass against the rules as shipped
     * (the runbook annotations are left out of the copy; the test above checks them).
     */
    @Test
    @SuppressWarnings("unchecked")
    void everyAlertFiresAndStaysQuietInPromtoolsUnitTests() throws Exception {
        Map<String, Object> spec = (Map<String, Object>) ((Map<String, Object>) new Yaml().load(Files.readString(RULE))).get("spec");
        java.util.Set<String> alerts = new java.util.TreeSet<>();
        for (Map<String, Object> group : (Iterable<Map<String, Object>>) spec.get("groups")) {
            for (Map<String, Object> rule : (Iterable<Map<String, Object>>) group.get("rules")) {
                if (rule.get("alert") != null) {
                    alerts.add((String) rule.get("alert"));
                    ((Map<String, Object>) rule.get("annotations")).remove("runbook");
                }
            }
        }
        Path dir = Files.createTempDirectory("promtool-tests");
        Files.writeString(dir.resolve("rules.yaml"), new Yaml().dump(spec));
        Path tests = dir.resolve("prometheusrule-test.yaml");
        Files.copy(Path.of("k8s/monitoring/tests/prometheusrule-test.yaml"), tests);

        Map<String, Object> suite = new Yaml().load(Files.readString(tests));
        java.util.Set<String> fired = new java.util.TreeSet<>();
        java.util.Set<String> quiet = new java.util.TreeSet<>();
        for (Map<String, Object> test : (Iterable<Map<String, Object>>) suite.get("tests")) {
            for (Map<String, Object> check : (Iterable<Map<String, Object>>) test.get("alert_rule_test")) {
                boolean expectsAlert = !((java.util.List<?>) check.get("exp_alerts")).isEmpty();
                (expectsAlert ? fired : quiet).add((String) check.get("alertname"));
            }
        }
        assertThat(fired).as("alerts made to fire").isEqualTo(alerts);
        assertThat(quiet).as("alerts shown quiet").isEqualTo(alerts);

        Process run = new ProcessBuilder(promtool(), "test", "rules", tests.toString()).directory(dir.toFile())
                .redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes());
        assertThat(run.waitFor()).as(out).isZero();
        assertThat(out).contains("SUCCESS");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyMetricARuleOrAPanelNamesIsExportedByTheService() throws Exception {
        Set<String> named = new TreeSet<>();
        Map<String, Object> rule = new Yaml().load(Files.readString(RULE));
        for (Map<String, Object> group : (Iterable<Map<String, Object>>) ((Map<String, Object>) rule.get("spec")).get("groups")) {
            for (Map<String, Object> alert : (Iterable<Map<String, Object>>) group.get("rules")) {
                named.addAll(metricsIn((String) alert.get("expr")));
            }
        }
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        dashboard.path("panels").forEach(panel -> panel.path("targets").forEach(t -> named.addAll(metricsIn(t.path("expr").asText()))));
        assertThat(named).contains("adapter_inbox_oldest_pending_age_seconds", "adapter_circuit_state", "adapter_replies_total");

        // traffic: a row that completes, one that goes DEAD (and is replied to)
        String completed = client.accept(ServiceClient.message(uniqueSubject("MON"), ""));
        String patno = "PMON" + System.nanoTime();
        simulator().add(new DownstreamSimulator.Fault(s -> s.equals("GET /legacy/patients/" + patno), 404,
                "{\"code\":\"PATIENT_NOT_FOUND\",\"message\":\"patient not found\"}", 0));
        String dead = client.accept(ServiceClient.message(uniqueSubject("MON"), patno, ""));
        rows.awaitStatus(completed, "COMPLETED");
        rows.awaitStatus(dead, "DEAD");

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            String scrape = client.management("/actuator/prometheus").body();
            Set<String> exported = new TreeSet<>();
            scrape.lines().filter(l -> !l.startsWith("#")).forEach(l -> exported.add(l.split("[{ ]", 2)[0]));
            assertThat(exported).as("metrics named in k8s/monitoring").containsAll(named);
            // the reception SLO's rules read the bucket at its boundary: it must be exported with that le
            String slo = java.math.BigDecimal.valueOf(com.hospital.surveyinbox.config.LatencyBuckets.RECEPTION_SLO.toNanos(), 9)
                    .stripTrailingZeros().toPlainString();
            assertThat(Files.readString(RULE)).contains("le=\"" + slo + "\"");
            assertThat(scrape).containsPattern("adapter_reception_accept_seconds_bucket\\{[^}]*le=\"" + slo + "\"");
            // and buckets beyond the store timeout and a synchronous registration's bound (a 503 at 5 s + waits, up to 2 min)
            assertThat(scrape).containsPattern("adapter_reception_accept_seconds_bucket\\{[^}]*le=\"120.0\"");
            assertThat(scrape).containsPattern("process_uptime_seconds ");
        });
    }

    private static Set<String> metricsIn(String text) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(text);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** promtool on PATH, else Debian's prometheus package where that can be installed; a clear failure otherwise. */
    private static String promtool() {
        return com.hospital.surveyinbox.support.Tools.require("the alert rules' checks", java.util.List.of("promtool"),
                java.util.List.of("prometheus")).toString();
    }
}
