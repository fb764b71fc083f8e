package com.hospital.surveyinbox.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * No kustomize or cluster runs here, so the manifests are parsed as YAML and checked against the
 * application itself: probes, ports, route files, env names, secrets, replicas, container hardening.
 */
class ManifestConsistencyTest {

    static final Path ROOT = Path.of(".");
    /** Read by the JVM or the C library under it, not by Spring. */
    static final Set<String> JVM_ENV = Set.of("JAVA_TOOL_OPTIONS", "JAVA_OPTS", "MALLOC_ARENA_MAX");
    /** Read by Boot's config-data bootstrap before binding, so absent from the metadata files. */
    static final Set<String> BOOT_BOOTSTRAP_ENV = Set.of("SPRING_CONFIG_ADDITIONAL_LOCATION", "SPRING_CONFIG_LOCATION",
            "SPRING_CONFIG_IMPORT", "SPRING_PROFILES_ACTIVE");
    static Set<String> propertyKeys = new HashSet<>();
    static Set<String> mapPropertyKeys = new HashSet<>();
    static Map<String, Object> appConfig;

    @BeforeAll
    static void loadMetadata() throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        for (URL url : Collections.list(ManifestConsistencyTest.class.getClassLoader()
                .getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                for (JsonNode p : mapper.readTree(in).path("properties")) {
                    String name = p.path("name").asText();
                    propertyKeys.add(name);
                    if (p.path("type").asText().startsWith("java.util.Map")) {
                        mapPropertyKeys.add(name);
                    }
                }
            }
        }
        appConfig = yaml(ROOT.resolve("config/application.yaml")).get(0);
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> yaml(Path file) throws IOException {
        List<Map<String, Object>> docs = new ArrayList<>();
        for (Object doc : new Yaml().loadAll(Files.readString(file))) {
            if (doc != null) {
                docs.add((Map<String, Object>) doc);
            }
        }
        return docs;
    }

    /** A parsed YAML tree as flat property names (a.b.c), for Boot's Binder. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> flatten(String prefix, Map<String, Object> tree) {
        Map<String, Object> flat = new LinkedHashMap<>();
        tree.forEach((key, value) -> {
            String name = prefix.isEmpty() ? key : prefix + "." + key;
            if (value instanceof Map<?, ?> inner) {
                flat.putAll(flatten(name, (Map<String, Object>) inner));
            } else {
                flat.put(name, value);
            }
        });
        return flat;
    }

    /** config/application.yaml's {@code prefix} bound as Spring Boot binds it. */
    static <T> T bound(String prefix, Class<T> type) {
        return new org.springframework.boot.context.properties.bind.Binder(
                new org.springframework.boot.context.properties.source.MapConfigurationPropertySource(flatten("", appConfig)))
                .bind(prefix, type).get();
    }

    @SuppressWarnings("unchecked")
    static <T> T at(Object node, String... path) {
        Object current = node;
        for (String p : path) {
            if (current instanceof Map<?, ?> map) {
                current = map.get(p);
            } else if (current instanceof List<?> list) {
                current = list.get(Integer.parseInt(p));
            } else {
                return null;
            }
        }
        return (T) current;
    }

    static Map<String, Object> deployment() throws IOException {
        return yaml(ROOT.resolve("k8s/base/deployment.yaml")).get(0);
    }

    static Map<String, Object> container() throws IOException {
        return at(deployment(), "spec", "template", "spec", "containers", "0");
    }

    @Test
    void probesHitTheActuatorHealthGroupsOnTheManagementPort() throws IOException {
        Map<String, Object> c = container();
        int managementPort = ((Number) at(appConfig, "management", "server", "port")).intValue();
        int httpPort = ((Number) at(appConfig, "server", "port")).intValue();
        List<Map<String, Object>> ports = at(c, "ports");
        Map<String, Integer> byName = new LinkedHashMap<>();
        ports.forEach(p -> byName.put((String) p.get("name"), ((Number) p.get("containerPort")).intValue()));
        assertThat(byName).containsEntry("management", managementPort).containsEntry("http", httpPort);
        assertThat((String) at(c, "livenessProbe", "httpGet", "path")).isEqualTo("/actuator/health/liveness");
        assertThat((String) at(c, "startupProbe", "httpGet", "path")).isEqualTo("/actuator/health/liveness");
        assertThat((String) at(c, "readinessProbe", "httpGet", "path")).isEqualTo("/actuator/health/readiness");
        for (String probe : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
            assertThat((Object) at(c, probe, "httpGet", "port")).as(probe).isEqualTo("management");
        }
        assertThat((Boolean) at(appConfig, "management", "endpoint", "health", "probes", "enabled")).isTrue();
        Map<String, Object> service = yaml(ROOT.resolve("k8s/base/service.yaml")).get(0);
        assertThat((Object) at(service, "spec", "ports", "0", "targetPort")).isEqualTo("http");
    }

    @Test
    void everyRouteFileIsInTheRoutesConfigMapAndMountedWhereTheServiceLooks() throws IOException {
        List<String> listed = at(yaml(ROOT.resolve("routes/kustomization.yaml")).get(0), "configMapGenerator", "0", "files");
        List<String> onDisk;
        try (Stream<Path> files = Files.list(ROOT.resolve("routes"))) {
            onDisk = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".camel.yaml")).sorted().toList();
        }
        assertThat(listed).containsExactlyInAnyOrderElementsOf(onDisk);
        // a client-side apply copies the ConfigMap into an annotation capped at 256 KiB (the routes are near 200 KB):
        // refused, the Deployment naming it still applied and its new pods waited for it. The docs apply server-side,
        // where the limit is a ConfigMap's own 1 MiB
        long bytes = 0;
        for (String file : listed) {
            bytes += Files.size(ROOT.resolve("routes").resolve(file));
        }
        assertThat(bytes).as("the routes' ConfigMap").isLessThan(900_000);
        List<Path> docs;
        try (Stream<Path> markdown = Files.list(ROOT.resolve("docs")); Stream<Path> manifests = Files.walk(ROOT.resolve("k8s"))) {
            docs = Stream.of(Stream.of(ROOT.resolve("README.md")), markdown.filter(p -> p.toString().endsWith(".md")),
                    manifests.filter(p -> p.toString().endsWith(".yaml"))).flatMap(s -> s).toList();
        }
        // one command, up to its closing backquote or line end, that applies a kustomization without --server-side
        java.util.regex.Pattern clientSide = java.util.regex.Pattern.compile("kubectl apply(?![^`\\n]*--server-side)[^`\\n]* -k\\b");
        for (Path doc : docs) {
            assertThat(clientSide.matcher(Files.readString(doc)).results().map(java.util.regex.MatchResult::group).toList())
                    .as("client-side applies in " + doc).isEmpty();
        }
        assertThat(clientSide.matcher("`kubectl apply --force-conflicts --server-side -k k8s/overlays/prod`").find()).isFalse();
        assertThat(clientSide.matcher("`kubectl apply -k k8s/overlays/prod`").find()).isTrue();
        List<String> configListed = at(yaml(ROOT.resolve("config/kustomization.yaml")).get(0), "configMapGenerator", "0", "files");
        configListed.forEach(f -> assertThat(ROOT.resolve("config").resolve(f)).exists());

        Map<String, Object> c = container();
        Map<String, String> mounts = new LinkedHashMap<>();
        List<Map<String, Object>> volumeMounts = at(c, "volumeMounts");
        volumeMounts.forEach(m -> mounts.put((String) m.get("name"), (String) m.get("mountPath")));
        Map<String, String> env = env(c);
        assertThat(env.get("ADAPTER_ROUTES_DIR")).isEqualTo(mounts.get("routes"));
        assertThat(env.get("SPRING_CONFIG_ADDITIONAL_LOCATION")).contains(mounts.get("config"));
        String included = at(appConfig, "camel", "main", "routes-include-pattern");
        assertThat(included).contains("${ADAPTER_ROUTES_DIR:");
        // the local run reloads the folder it loaded: an edited copy (ADAPTER_ROUTES_DIR=<copy>) is reloaded, and a
        // change under ./routes never mixes into a context running the copy
        String loadedFolder = included.substring("file:".length(), included.lastIndexOf('/'));
        assertThat((String) at(yaml(ROOT.resolve("config/application-dev.yaml")).get(0), "camel", "main",
                "routes-reload-directory")).isEqualTo(loadedFolder);
        List<Map<String, Object>> volumes = at(deployment(), "spec", "template", "spec", "volumes");
        Map<String, String> configMaps = new LinkedHashMap<>();
        volumes.stream().filter(v -> v.get("configMap") != null)
                .forEach(v -> configMaps.put((String) v.get("name"), at(v, "configMap", "name")));
        assertThat(configMaps).containsEntry("routes", at(yaml(ROOT.resolve("routes/kustomization.yaml")).get(0), "configMapGenerator", "0", "name"));
        assertThat(configMaps).containsEntry("config", at(yaml(ROOT.resolve("config/kustomization.yaml")).get(0), "configMapGenerator", "0", "name"));
    }

    @Test
    void everyEnvNameBindsToARealProperty() throws IOException {
        List<Map<String, String>> allEnv = new ArrayList<>();
        allEnv.add(env(container()));
        for (Path patch : manifests()) {
            for (Map<String, Object> doc : yaml(patch)) {
                List<Map<String, Object>> containers = at(doc, "spec", "template", "spec", "containers");
                if (containers != null) {
                    containers.forEach(c -> allEnv.add(env(c)));
                }
            }
        }
        String configText = Files.readString(ROOT.resolve("config/application.yaml"))
                + Files.readString(ROOT.resolve("config/application-prod.yaml"));
        for (Map<String, String> env : allEnv) {
            for (String name : env.keySet()) {
                boolean placeholder = configText.contains("${" + name + ":") || configText.contains("${" + name + "}");
                assertThat(JVM_ENV.contains(name) || BOOT_BOOTSTRAP_ENV.contains(name) || placeholder || bindsToProperty(name))
                        .as("env %s binds to no property", name).isTrue();
            }
        }
        // the documented secret keys bind too
        for (String name : List.of("ADAPTER_SECURITY_LEGACY_PASSWORD", "ADAPTER_SECURITY_OPS_USERNAME",
                "ADAPTER_CRYPTO_ACTIVE_KEY", "ADAPTER_CRYPTO_KEYS_K1", "SPRING_DATASOURCE_URL",
                "SPRING_KAFKA_BOOTSTRAP_SERVERS", "SPRING_DATA_REDIS_HOST", "ADAPTER_LEGACY_BASE_URL",
                "ADAPTER_INBOX_REDELIVER_CRON", "ADAPTER_INBOX_RETRY_DELAY", "ADAPTER_INBOX_LOST_EVENT_AFTER")) {
            assertThat(bindsToProperty(name)).as(name).isTrue();
        }
        assertThat(bindsToProperty("ADAPTER_INBOX_MAX_ATTEMPT")).as("a typo must not bind").isFalse();
    }

    /**
     * Dev may share prod's Kafka cluster or Redis: its topic, consumer group and consent-cache prefix are its own.
     * With the defaults, dev pods joined prod's consumer group, took some of its partitions and claimed prod's events
     * against dev's database (the prod rows never processed, republished to the same partitions).
     */
    @Test
    void theDevOverlayNamesItsOwnTopicGroupAndCachePrefix() throws IOException {
        Map<String, String> dev = new LinkedHashMap<>();
        for (Map<String, Object> doc : yaml(ROOT.resolve("k8s/overlays/dev/patch-resources.yaml"))) {
            List<Map<String, Object>> containers = at(doc, "spec", "template", "spec", "containers");
            containers.forEach(c -> dev.putAll(env(c)));
        }
        assertThat(Files.readString(ROOT.resolve("k8s/overlays/dev/kustomization.yaml"))).contains("patch-resources.yaml");
        Map<String, String> expected = Map.of(
                "ADAPTER_KAFKA_TOPIC", (String) at(appConfig, "adapter", "kafka", "topic"),
                "ADAPTER_KAFKA_GROUPID", (String) at(appConfig, "adapter", "kafka", "group-id"),
                "ADAPTER_CACHE_KEYPREFIX", (String) at(appConfig, "adapter", "cache", "key-prefix"));
        expected.forEach((name, prod) -> {
            assertThat(bindsToProperty(name)).as(name).isTrue();
            assertThat(dev.get(name)).as(name).isNotBlank().isNotEqualTo(prod);
        });
    }

    @Test
    void noSecretValueIsWrittenInAPlainManifest() throws IOException {
        for (Path file : manifests()) {
            for (Map<String, Object> doc : yaml(file)) {
                assertThat(doc.get("kind")).as(file.toString()).isNotEqualTo("Secret");
                assertThat(doc).as(file.toString()).doesNotContainKey("secretGenerator");
            }
            String text = Files.readString(file);
            assertThat(text).as(file.toString()).doesNotContainPattern("(?im)^\\s*-?\\s*(password|secret|token|api[-_]?key|stringData)\\s*:\\s*\\S");
        }
        for (Path file : manifests()) {
            for (Map<String, Object> doc : yaml(file)) {
                List<Map<String, Object>> containers = at(doc, "spec", "template", "spec", "containers");
                if (containers == null) {
                    continue;
                }
                for (Map<String, Object> c : containers) {
                    env(c).forEach((name, value) -> assertThat(name.matches(".*(PASSWORD|SECRET|KEYS?_.*|TOKEN).*") && value != null)
                            .as("%s in %s carries a literal value", name, file).isFalse());
                }
            }
        }
        assertThat((String) at(container(), "envFrom", "0", "secretRef", "name")).isNotBlank();
    }

    /**
     * X-Forwarded-For is believed only from the ingress: the public port admits the ingress namespace alone,
     * prod names the ingress's range as trusted proxies (never everything), and Tomcat's own forwarded-header
     * handling stays off (Spring Boot would turn it on by itself on Kubernetes).
     */
    @Test
    void onlyTheIngressReachesThePublicPortAndOnlyItsForwardedHeaderIsBelieved() throws IOException {
        Map<String, Object> policy = yaml(ROOT.resolve("k8s/base/networkpolicy.yaml")).get(0);
        List<Map<String, Object>> rules = at(policy, "spec", "ingress");
        int httpPort = ((Number) at(appConfig, "server", "port")).intValue();
        List<Map<String, Object>> publicRules = rules.stream().filter(r -> ((List<Map<String, Object>>) r.get("ports")).stream()
                .anyMatch(p -> ((Number) p.get("port")).intValue() == httpPort)).toList();
        assertThat(publicRules).isNotEmpty().allSatisfy(rule -> {
            List<Map<String, Object>> from = at(rule, "from");
            assertThat(from).as("port %d open to every pod", httpPort).isNotEmpty()
                    .allSatisfy(peer -> assertThat((Object) at(peer, "namespaceSelector", "matchLabels")).isNotNull());
        });
        assertThat((String) at(appConfig, "server", "forward-headers-strategy")).isEqualTo("none");

        Map<String, String> prodEnv = new LinkedHashMap<>();
        for (Map<String, Object> doc : yaml(ROOT.resolve("k8s/overlays/prod/patch-profile.yaml"))) {
            prodEnv.putAll(env(at(doc, "spec", "template", "spec", "containers", "0")));
        }
        assertThat(prodEnv.get("ADAPTER_SECURITY_TRUSTEDPROXIES")).isNotBlank();
        for (String range : prodEnv.get("ADAPTER_SECURITY_TRUSTEDPROXIES").split(",")) {
            assertThat(range.strip()).matches("[0-9a-fA-F.:]+/\\d+").doesNotEndWith("/0");
        }
    }

    /**
     * The prod ingress publishes the reception alone (an exact path: never /ops, the console or the OpenAPI), with
     * TLS, to the Service's port that reaches the container's public port, through the controller whose namespace
     * the NetworkPolicy admits to that port.
     */
    @Test
    void theProdIngressPublishesTheReceptionAlone() throws IOException {
        List<String> resources = at(yaml(ROOT.resolve("k8s/overlays/prod/kustomization.yaml")).get(0), "resources");
        assertThat(resources).contains("ingress.yaml");
        Map<String, Object> ingress = yaml(ROOT.resolve("k8s/overlays/prod/ingress.yaml")).get(0);
        assertThat(ingress.get("kind")).isEqualTo("Ingress");
        assertThat((Object) at(ingress, "spec", "tls", "0", "secretName")).isNotNull();
        List<Map<String, Object>> paths = new ArrayList<>();
        for (Map<String, Object> rule : (List<Map<String, Object>>) at(ingress, "spec", "rules")) {
            paths.addAll(at(rule, "http", "paths"));
        }
        assertThat(Files.readString(ROOT.resolve("routes/inbox-receive.camel.yaml"))).contains("platform-http:/legacy/survey-send-info");
        Map<String, Object> service = yaml(ROOT.resolve("k8s/base/service.yaml")).get(0);
        assertThat(paths).singleElement().satisfies(path -> {
            assertThat(path.get("path")).isEqualTo("/legacy/survey-send-info");
            assertThat(path.get("pathType")).isEqualTo("Exact");
            assertThat((Object) at(path, "backend", "service", "name")).isEqualTo(at(service, "metadata", "name"));
            String portName = at(path, "backend", "service", "port", "name");
            List<Map<String, Object>> ports = at(service, "spec", "ports");
            assertThat(ports).filteredOn(p -> portName.equals(p.get("name"))).singleElement()
                    .satisfies(p -> assertThat(p.get("targetPort")).isEqualTo("http"));
        });
        List<Map<String, Object>> containerPorts = at(container(), "ports");
        assertThat(containerPorts).filteredOn(p -> "http".equals(p.get("name"))).singleElement()
                .satisfies(p -> assertThat(((Number) p.get("containerPort")).intValue())
                        .isEqualTo(((Number) at(appConfig, "server", "port")).intValue()));
        assertThat((Object) at(ingress, "spec", "ingressClassName")).isEqualTo("nginx");
        assertThat(Files.readString(ROOT.resolve("k8s/base/networkpolicy.yaml"))).contains("kubernetes.io/metadata.name: ingress-nginx");
    }

    /**
     * A pod whose migrations wait for a table lock as long as they are written to (the retry loops of V12, V13, one
     * after the other when an old database is upgraded) is not killed by its startup probe first: the probe's budget
     * covers the waits added up plus 90 s to start (starts measured 30-83 s, bench/MEASURED.md).
     * And the preStop {@code sleep} action the Deployment uses exists from Kubernetes 1.30: the documented minimum.
     */
    @Test
    void theStartupProbeOutlastsTheLongestMigrationWaitAndTheDocumentedKubernetesHasThePreStopSleep() throws IOException {
        java.util.regex.Pattern loop = java.util.regex.Pattern.compile("FOR try IN 1\\.\\.(\\d+) LOOP");
        java.util.regex.Pattern lock = java.util.regex.Pattern.compile("'lock_timeout', '(\\d+)(ms|s)'");
        java.util.regex.Pattern pause = java.util.regex.Pattern.compile("pg_sleep\\(([0-9.]+)\\)");
        double waits = 0;
        try (Stream<Path> files = Files.list(ROOT.resolve("src/main/resources/db/migration"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".sql")).toList()) {
                String sql = Files.readString(file);
                java.util.regex.Matcher tries = loop.matcher(sql);
                if (!tries.find()) {
                    continue;
                }
                java.util.regex.Matcher wait = lock.matcher(sql);
                java.util.regex.Matcher sleep = pause.matcher(sql);
                assertThat(wait.find()).as(file + " lock_timeout").isTrue();
                assertThat(sleep.find()).as(file + " pg_sleep").isTrue();
                double lockSeconds = Integer.parseInt(wait.group(1)) / (wait.group(2).equals("ms") ? 1000.0 : 1.0);
                waits += Integer.parseInt(tries.group(1)) * (lockSeconds + Double.parseDouble(sleep.group(1)));
            }
        }
        assertThat(waits).as("V12's and V13's loops").isGreaterThanOrEqualTo(420);
        Map<String, Object> startup = at(container(), "startupProbe");
        int budget = ((Number) startup.get("periodSeconds")).intValue() * ((Number) startup.get("failureThreshold")).intValue()
                + ((Number) startup.getOrDefault("initialDelaySeconds", 0)).intValue();
        assertThat((double) budget).as("startup probe budget, s").isGreaterThanOrEqualTo(waits + 90);
        // a rollout is reported failed when a new pod is not ready within progressDeadlineSeconds: the startup budget
        // and the job registration lock's minute must fit in it
        int progress = ((Number) at(deployment(), "spec", "progressDeadlineSeconds")).intValue();
        assertThat(progress * 1000L).as("progressDeadlineSeconds >= startup budget + JobRegistrationLock's wait")
                .isGreaterThanOrEqualTo(budget * 1000L + com.hospital.surveyinbox.config.JobRegistrationLock.TIMEOUT_MILLIS);
        // a pod started while another migrates waits for Flyway's lock as long as the migration may take: Flyway's
        // default (50 tries, 1 s apart) made it fail and crash-loop. Bound as Boot binds it:
        org.springframework.boot.autoconfigure.flyway.FlywayProperties flyway =
                bound("spring.flyway", org.springframework.boot.autoconfigure.flyway.FlywayProperties.class);
        // as long as another instance's migrations may wait (their loops), within the startup budget together with
        // the job registration lock's wait (Camel starts inside Boot's refresh: liveness is down until both are over)
        // and a start's own time
        assertThat((double) flyway.getLockRetryCount()).as("spring.flyway.lock-retry-count (s)")
                .isGreaterThanOrEqualTo(waits)
                .isLessThanOrEqualTo(budget - 90 - com.hospital.surveyinbox.config.JobRegistrationLock.TIMEOUT_MILLIS / 1000.0);
        // a database that cannot be reached at start is waited for, then Flyway's own connection retries a flap,
        // within the same budget: not given up at the first try (a crash loop), not past the probe (a kill without
        // the message). Flyway's retries come on top of the wait, so they are counted with it
        java.time.Duration databaseWait = bound("adapter.migration", com.hospital.surveyinbox.config.AdapterProperties.Migration.class)
                .getDatabaseWait();
        double reachWait = databaseWait.toSeconds() + com.hospital.surveyinbox.config.FlywayConnection.flywayPauseSeconds(
                flyway.getConnectRetries(), (int) flyway.getConnectRetriesInterval().toSeconds());
        assertThat(reachWait).as("adapter.migration.database-wait and spring.flyway.connect-retries' pauses (s)")
                .isGreaterThanOrEqualTo(300)
                .isLessThanOrEqualTo(budget - 90 - com.hospital.surveyinbox.config.JobRegistrationLock.TIMEOUT_MILLIS / 1000.0);

        assertThat((Object) at(container(), "lifecycle", "preStop", "sleep")).isNotNull();
        // the blind-monitoring alert names the namespace prod deploys to: renamed in one place only, it would fire forever
        String namespace = at(yaml(ROOT.resolve("k8s/overlays/prod/kustomization.yaml")).get(0), "namespace");
        assertThat(Files.readString(ROOT.resolve("k8s/monitoring/prometheusrule.yaml"))).contains("namespace=\"" + namespace + "\"");
        assertThat(Files.readString(ROOT.resolve("docs/deploying.md"))).contains("Kubernetes 1.30 or later");
    }

    /** Spans can leave the pod once an OTLP endpoint is set: the collector's standard OTLP/HTTP port is let out. */
    @Test
    void theTraceExporterCanReachACollector() throws IOException {
        Map<String, Object> policy = yaml(ROOT.resolve("k8s/base/networkpolicy.yaml")).get(0);
        List<Map<String, Object>> egress = at(policy, "spec", "egress");
        assertThat(egress.stream().flatMap(rule -> ((List<Map<String, Object>>) rule.get("ports")).stream())
                .map(p -> ((Number) p.get("port")).intValue())).contains(4318);
        assertThat(Files.readString(ROOT.resolve("config/application.yaml"))).contains(":4318/v1/traces");
    }

    /**
     * Every egress rule but DNS names its destinations, and none reaches a link-local address: 169.254.169.254 (and
     * AWS's fd00:ec2::254) is a cloud's instance metadata service, which hands the node's credentials to any pod that
     * asks on port 80, a port the downstream calls need. Rules without {@code to:} let the pods out to every address.
     */
    @Test
    @SuppressWarnings("unchecked")
    void egressNeverReachesTheInstanceMetadataService() throws IOException {
        Map<String, Object> policy = yaml(ROOT.resolve("k8s/base/networkpolicy.yaml")).get(0);
        for (Map<String, Object> rule : (List<Map<String, Object>>) at(policy, "spec", "egress")) {
            boolean dns = ((List<Map<String, Object>>) rule.get("ports")).stream().allMatch(p -> ((Number) p.get("port")).intValue() == 53);
            if (dns) {
                continue;
            }
            List<Map<String, Object>> to = (List<Map<String, Object>>) rule.get("to");
            assertThat(to).as("egress rule %s names its destinations", rule).isNotEmpty();
            for (Map<String, Object> peer : to) {
                Map<String, Object> block = (Map<String, Object>) peer.get("ipBlock");
                if (block == null) {
                    assertThat(peer).as("in-cluster peer").containsKey("namespaceSelector");
                    continue;
                }
                String cidr = (String) block.get("cidr");
                List<String> except = (List<String>) block.getOrDefault("except", List.of());
                for (String metadata : List.of("169.254.169.254", "fd00:ec2::254", "fd20:ce::254")) {
                    if (covers(cidr, metadata)) {
                        assertThat(except).as(cidr + " except").anyMatch(e -> covers(e, metadata));
                    }
                }
            }
        }
    }

    /**
     * The pod's JVM runs with the options the benchmark measured its resources under (all but MaxRAM, which stands for
     * the pod's memory limit there), the processor count among them: left to the node, a JVM on a large node sized
     * its GC and JIT threads, the common pool and Lettuce's event loops from every core, outside the heap the memory
     * request was measured on two cores for.
     */
    @Test
    @SuppressWarnings("unchecked")
    void thePodsJvmRunsWithTheOptionsItsResourcesWereMeasuredUnder() throws IOException {
        String options = ((List<Map<String, Object>>) at(container(), "env")).stream()
                .filter(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name"))).map(e -> (String) e.get("value")).findFirst().orElseThrow();
        List<String> given = List.of(options.split("\\s+"));
        assertThat(com.hospital.surveyinbox.bench.InboxBenchmark.APART_JVM.stream().filter(o -> !o.startsWith("-XX:MaxRAM=")))
                .as("measured under").isNotEmpty().allSatisfy(o -> assertThat(given).contains(o));
        assertThat(given).anySatisfy(o -> assertThat(o).startsWith("-XX:ActiveProcessorCount="));
        // and glibc's arenas, which follow the node's cores whatever the JVM is told
        assertThat(((List<Map<String, Object>>) at(container(), "env")).stream()
                .filter(e -> "MALLOC_ARENA_MAX".equals(e.get("name"))).map(e -> String.valueOf(e.get("value"))).toList())
                .containsExactly("2");
    }

    /**
     * Each overlay's memory request covers what the pod may use: the heap grows to MaxRAMPercentage of the limit (the
     * Parallel collector grows it towards its cap while a backlog drains) plus at least 300 MiB outside the heap
     * (deployment.yaml's measurements). Dev requested 768 MiB under the base's 1536 MiB limit: up to about 1.1 GiB
     * used, the first pod evicted under node pressure.
     */
    @Test
    void eachOverlaysMemoryRequestCoversItsHeapCapAndWhatLiesOutsideIt() throws IOException {
        Map<String, Object> base = at(container(), "resources");
        String options = ((List<Map<String, Object>>) at(container(), "env")).stream()
                .filter(e -> "JAVA_TOOL_OPTIONS".equals(e.get("name"))).map(e -> (String) e.get("value")).findFirst().orElseThrow();
        java.util.regex.Matcher percent = java.util.regex.Pattern.compile("-XX:MaxRAMPercentage=(\\d+)").matcher(options);
        assertThat(percent.find()).as(options).isTrue();
        double share = Integer.parseInt(percent.group(1)) / 100.0;
        for (String overlay : List.of("base", "dev", "prod")) {
            Map<String, Object> resources = base;
            Path patch = ROOT.resolve("k8s/overlays/" + overlay + "/patch-resources.yaml");
            if (Files.exists(patch)) {
                Map<String, Object> patched = at(yaml(patch).get(0), "spec", "template", "spec", "containers", "0", "resources");
                resources = merge(base, patched);
            }
            long request = mebibytes(at(resources, "requests", "memory"));
            long limit = mebibytes(at(resources, "limits", "memory"));
            // 345 MiB outside the heap measured at 64 connections (bench/results/APART.md), and the stacks of the
            // request threads beyond those (200 at the pod's peak: up to 136 MiB more)
            assertThat((double) request).as(overlay + ": memory request (MiB) >= heap cap + 345 + 136 MiB, limit " + limit)
                    .isGreaterThanOrEqualTo(share * limit + 345 + 136);
            assertThat(request).as(overlay).isLessThanOrEqualTo(limit);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> patch) {
        Map<String, Object> merged = new LinkedHashMap<>(base);
        patch.forEach((key, value) -> merged.merge(key, value, (a, b) -> a instanceof Map<?, ?> && b instanceof Map<?, ?>
                ? merge((Map<String, Object>) a, (Map<String, Object>) b) : b));
        return merged;
    }

    private static long mebibytes(String quantity) {
        if (quantity.endsWith("Gi")) {
            return Long.parseLong(quantity.substring(0, quantity.length() - 2)) * 1024;
        }
        assertThat(quantity).endsWith("Mi");
        return Long.parseLong(quantity.substring(0, quantity.length() - 2));
    }

    /** Whether an address is inside a CIDR block (IPv4 or IPv6). */
    private static boolean covers(String cidr, String address) {
        try {
            String[] parts = cidr.split("/");
            byte[] net = java.net.InetAddress.getByName(parts[0]).getAddress();
            byte[] ip = java.net.InetAddress.getByName(address).getAddress();
            if (net.length != ip.length) {
                return false;
            }
            int bits = Integer.parseInt(parts[1]);
            for (int i = 0; i < bits; i++) {
                int mask = 0x80 >> (i % 8);
                if ((net[i / 8] & mask) != (ip[i / 8] & mask)) {
                    return false;
                }
            }
            return true;
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(cidr, e);
        }
    }

    /**
     * Each overlay pulls its image from a registry (dev named only a tag: docker.io/library/survey-inbox-adapter,
     * which does not exist, pulled Always: every dev pod in ImagePullBackOff), and an overlay that applies the
     * ServiceMonitor carries no scrape annotations (scraped twice, every rate the alerts read doubled).
     */
    @Test
    void eachOverlayPullsFromARegistryAndIsScrapedOnce() throws IOException {
        int monitored = 0;
        try (Stream<Path> overlays = Files.list(ROOT.resolve("k8s/overlays"))) {
            for (Path overlay : overlays.filter(Files::isDirectory).toList()) {
                Map<String, Object> kustomization = yaml(overlay.resolve("kustomization.yaml")).get(0);
                List<Map<String, Object>> images = at(kustomization, "images");
                assertThat(images).as(overlay + " images").isNotEmpty().allSatisfy(image -> {
                    String name = String.valueOf(image.get("newName"));
                    assertThat(name.substring(0, Math.max(0, name.indexOf('/')))).as(overlay + " image registry of " + name)
                            .containsAnyOf(".", ":");
                });
                List<String> resources = at(kustomization, "resources");
                if (resources.contains("../../monitoring")) {
                    monitored++;
                    List<Path> sources = new ArrayList<>(List.of(ROOT.resolve("k8s/base/deployment.yaml")));
                    List<Map<String, Object>> patches = at(kustomization, "patches");
                    patches.forEach(patch -> sources.add(overlay.resolve((String) patch.get("path"))));
                    for (Path source : sources) {
                        assertThat(Files.readString(source)).as(source + " in " + overlay + ", which has the ServiceMonitor")
                                .doesNotContain("prometheus.io/scrape");
                    }
                }
            }
        }
        assertThat(monitored).as("overlays that apply the ServiceMonitor").isPositive();
    }

    @Test
    void prodRunsAtLeastTwoHardenedReplicas() throws IOException {
        Map<String, Object> kustomization = yaml(ROOT.resolve("k8s/overlays/prod/kustomization.yaml")).get(0);
        List<Map<String, Object>> patches = at(kustomization, "patches");
        // the HPA owns the replicas: a Deployment that sets them scales back on every apply (every route change)
        assertThat((Object) at(deployment(), "spec", "replicas")).as("Deployment spec.replicas").isNull();
        Integer replicas = null;
        int hpaMin = ((Number) at(yaml(ROOT.resolve("k8s/base/hpa.yaml")).get(0), "spec", "minReplicas")).intValue();
        int hpaMax = ((Number) at(yaml(ROOT.resolve("k8s/base/hpa.yaml")).get(0), "spec", "maxReplicas")).intValue();
        for (Map<String, Object> patch : patches) {
            Path file = ROOT.resolve("k8s/overlays/prod").resolve((String) patch.get("path"));
            assertThat(file).exists();
            assertThat(file.getFileName().toString()).startsWith("patch-");
            for (Map<String, Object> doc : yaml(file)) {
                if ("Deployment".equals(doc.get("kind")) && at(doc, "spec", "replicas") != null) {
                    replicas = ((Number) at(doc, "spec", "replicas")).intValue();
                }
                if ("HorizontalPodAutoscaler".equals(doc.get("kind")) && at(doc, "spec", "minReplicas") != null) {
                    hpaMin = ((Number) at(doc, "spec", "minReplicas")).intValue();
                }
                if ("HorizontalPodAutoscaler".equals(doc.get("kind")) && at(doc, "spec", "maxReplicas") != null) {
                    hpaMax = ((Number) at(doc, "spec", "maxReplicas")).intValue();
                }
            }
        }
        assertThat(replicas).as("no overlay sets replicas either").isNull();
        assertThat(hpaMin).isGreaterThanOrEqualTo(2);
        // every consumer of every replica gets a partition: more would idle
        int consumers = ((Number) at(appConfig, "adapter", "kafka", "consumers")).intValue();
        int partitions = ((Number) at(appConfig, "adapter", "kafka", "partitions")).intValue();
        assertThat(hpaMax * consumers).as("maxReplicas x consumers <= partitions").isLessThanOrEqualTo(partitions);
        Map<String, Object> pdb = yaml(ROOT.resolve("k8s/base/pdb.yaml")).get(0);
        assertThat((Object) at(pdb, "spec", "maxUnavailable")).isEqualTo(1);
        assertThat((Object) at(pdb, "spec", "minAvailable")).isNull();
        assertThat((Object) at(pdb, "spec", "unhealthyPodEvictionPolicy")).isEqualTo("AlwaysAllow");
        List<Map<String, Object>> spread = at(deployment(), "spec", "template", "spec", "topologySpreadConstraints");
        assertThat(spread).extracting(c -> c.get("topologyKey"))
                .contains("kubernetes.io/hostname", "topology.kubernetes.io/zone");
        // preferred: a node without room counts as an empty domain, and a required spread left pods Pending
        assertThat(spread).extracting(c -> c.get("whenUnsatisfiable")).containsOnly("ScheduleAnyway");
        // and a second pod on a node weighed against as strongly as a preference can be
        List<Map<String, Object>> apart = at(deployment(), "spec", "template", "spec", "affinity", "podAntiAffinity",
                "preferredDuringSchedulingIgnoredDuringExecution");
        assertThat(apart).singleElement().satisfies(term -> {
            assertThat(term.get("weight")).isEqualTo(100);
            assertThat((Object) at(term, "podAffinityTerm", "topologyKey")).isEqualTo("kubernetes.io/hostname");
        });

        Map<String, Object> c = container();
        assertThat((Boolean) at(deployment(), "spec", "template", "spec", "securityContext", "runAsNonRoot")).isTrue();
        assertThat((Boolean) at(c, "securityContext", "readOnlyRootFilesystem")).isTrue();
        assertThat((Boolean) at(c, "securityContext", "allowPrivilegeEscalation")).isFalse();
        assertThat((Object) at(c, "resources", "requests", "memory")).isNotNull();
        assertThat((Object) at(c, "resources", "limits", "memory")).isNotNull();
        int grace = ((Number) at(deployment(), "spec", "template", "spec", "terminationGracePeriodSeconds")).intValue();
        // preStop + the web server's graceful stop + Camel's in-flight wait, with a margin: SIGKILL never comes first
        int preStop = ((Number) at(c, "lifecycle", "preStop", "sleep", "seconds")).intValue();
        long web = org.springframework.boot.convert.DurationStyle.detectAndParse(
                String.valueOf((Object) at(appConfig, "spring", "lifecycle", "timeout-per-shutdown-phase"))).toMillis();
        long camel = ((Number) at(appConfig, "camel", "main", "shutdown-timeout")).longValue() * 1000;
        assertThat(grace * 1000L).as("terminationGracePeriodSeconds >= preStop + web + Camel + 10 s margin (Quartz, "
                + "the Kafka producer and the pools close after Camel)").isGreaterThanOrEqualTo(preStop * 1000L + web + camel + 10_000);
        // The waits cover a registration whose every downstream call takes its whole time: a pooled connection's
        // lease (connection-request timeout = connect timeout, CamelHttpTuning) + connect + response timeout.
        // Camel's in-flight wait covers a row's registration and its DEAD reply (every downstream call site of the
        // routes: an upper bound on one row's calls, since send, resend and submit exclude each other), the web
        // server's graceful stop the rollback toggle's synchronous registration on a request thread (the call
        // sites of inbox-register and inbox-consents).
        java.time.Duration connect = java.time.Duration.parse((String) at(appConfig, "adapter", "http", "connect-timeout"));
        long perCall = connect.multipliedBy(2)
                .plus(java.time.Duration.parse((String) at(appConfig, "adapter", "http", "response-timeout"))).toMillis();
        // counted in the parsed routes (any YAML spelling of a to/toD step whose URI starts at a downstream base-url)
        Map<String, Long> calls = new LinkedHashMap<>();
        try (Stream<Path> routes = Files.list(ROOT.resolve("routes"))) {
            for (Path r : routes.filter(p -> p.toString().endsWith(".camel.yaml")).sorted().toList()) {
                Object parsed = new Yaml().load(Files.readString(r));
                calls.put(r.getFileName().toString(), downstreamCalls(parsed));
            }
        }
        assertThat(calls).as("the registration's route files").containsKeys("inbox-register.camel.yaml", "inbox-consents.camel.yaml");
        long all = calls.values().stream().mapToLong(Long::longValue).sum();
        long synchronous = calls.get("inbox-register.camel.yaml") + calls.get("inbox-consents.camel.yaml");
        // a floor against a spelling the count misses: CONTRACT §3's registration makes 6 kinds of call (+ resend)
        assertThat(synchronous).as("downstream calls of a registration found in routes/: %s", calls).isGreaterThanOrEqualTo(6);
        assertThat(all).as("the reply's call too").isGreaterThan(synchronous);
        // the prod check computes the same bound from the settings a pod runs with, for this many call sites
        assertThat(all).as("ProductionSafetyCheck.ROW_CALLS, the call sites in routes/: %s", calls)
                .isEqualTo(com.hospital.surveyinbox.config.ProductionSafetyCheck.ROW_CALLS);
        // and the row's own statements - before the calls its claim and the resend check, after them the outcome, the
        // reply's claim and its result, the successor's lookup: 6, each up to a pooled connection's wait + the socket
        // timeout -, the consent turn's wait (twice the response timeout, ConsentCache) and the successor's publish
        // (blocked up to max-block, then acknowledged within the delivery timeout)
        long statement = ((Number) at(appConfig, "spring", "datasource", "hikari", "connection-timeout")).longValue()
                + ((Number) at(appConfig, "spring", "datasource", "hikari", "data-source-properties", "socketTimeout")).longValue() * 1000;
        long publish = ((Number) at(appConfig, "camel", "component", "kafka", "max-block-ms")).longValue()
                + ((Number) at(appConfig, "camel", "component", "kafka", "delivery-timeout-ms")).longValue();
        long consentWait = java.time.Duration.parse((String) at(appConfig, "adapter", "http", "response-timeout")).toMillis() * 2;
        long afterCalls = com.hospital.surveyinbox.config.ProductionSafetyCheck.ROW_STATEMENTS * statement + consentWait + publish;
        assertThat(com.hospital.surveyinbox.config.ProductionSafetyCheck.ROW_STATEMENTS).isEqualTo(6);
        assertThat(camel).as("camel.main.shutdown-timeout (ms) >= %d calls x %d ms + %d ms", all, perCall, afterCalls)
                .isGreaterThanOrEqualTo(all * perCall + afterCalls);
        // the web server's graceful stop and the ingress's wait for an answer cover a synchronous registration (rollback
        // toggle, on the request thread) whose every wait runs out: its calls, the consent turn, its 5 statements
        // (the reception path's claim, the key read again, the resend check, the record, the lease's release); shorter, the sender got a 502/504 for a
        // message registered anyway, and sent it again
        assertThat(synchronous).as("ProductionSafetyCheck.SYNCHRONOUS_CALLS, the call sites of inbox-register and inbox-consents")
                .isEqualTo(com.hospital.surveyinbox.config.ProductionSafetyCheck.SYNCHRONOUS_CALLS);
        long synchronousWorst = synchronous * perCall + consentWait
                + com.hospital.surveyinbox.config.ProductionSafetyCheck.SYNCHRONOUS_STATEMENTS * statement;
        assertThat(synchronousWorst).as("the figure config/application.yaml and the ingress state").isEqualTo(112_000);
        assertThat(web).as("spring.lifecycle.timeout-per-shutdown-phase (ms) >= a synchronous registration, %d ms", synchronousWorst)
                .isGreaterThanOrEqualTo(synchronousWorst);
        Map<String, Object> ingress = yaml(ROOT.resolve("k8s/overlays/prod/ingress.yaml")).get(0);
        // Tomcat keeps an idle connection longer than the ingress keeps its upstream connections (ingress-nginx's
        // upstream-keepalive-timeout, 60 s, not set per Ingress): equal, nginx could reuse a socket Tomcat was closing
        // and answer a POST 502 (never retried)
        org.springframework.boot.autoconfigure.web.ServerProperties server =
                bound("server", org.springframework.boot.autoconfigure.web.ServerProperties.class);
        assertThat(server.getTomcat().getKeepAliveTimeout()).as("server.tomcat.keep-alive-timeout").isGreaterThan(Duration.ofSeconds(60));
        assertThat(ingress.toString()).doesNotContain("upstream-keepalive-timeout");
        long readTimeout = Long.parseLong(at(ingress, "metadata", "annotations", "nginx.ingress.kubernetes.io/proxy-read-timeout"));
        assertThat(readTimeout * 1000).as("the ingress's proxy-read-timeout >= a synchronous registration, %d ms", synchronousWorst)
                .isGreaterThanOrEqualTo(synchronousWorst);
        for (String base : List.of("k8s/base", "k8s/overlays/dev", "k8s/overlays/prod")) {
            Map<String, Object> k = yaml(ROOT.resolve(base).resolve("kustomization.yaml")).get(0);
            assertThat(k).as(base).doesNotContainKeys("bases", "patchesStrategicMerge");
            List<String> resources = at(k, "resources");
            resources.forEach(r -> assertThat(ROOT.resolve(base).resolve(r)).as(base + " -> " + r).exists());
        }
        String dockerfile = Files.readString(ROOT.resolve("k8s/Dockerfile"));
        assertThat(dockerfile).contains("USER 10001", "--layers");
    }

    /** The to/toD steps in a parsed route file whose URI starts at a downstream's base URL ({{adapter.*.base-url}}). */
    static long downstreamCalls(Object node) {
        long found = 0;
        if (node instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if ("to".equals(e.getKey()) || "toD".equals(e.getKey())) {
                    Object uri = e.getValue() instanceof Map<?, ?> step ? step.get("uri") : e.getValue();
                    if (uri instanceof String s && s.strip().matches("\\{\\{adapter\\.[a-z-]+\\.base-url}}.*")) {
                        found++;
                    }
                }
                found += downstreamCalls(e.getValue());
            }
        } else if (node instanceof List<?> list) {
            for (Object item : list) {
                found += downstreamCalls(item);
            }
        }
        return found;
    }

    static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> env = new LinkedHashMap<>();
        List<Map<String, Object>> list = at(container, "env");
        if (list != null) {
            list.forEach(e -> env.put((String) e.get("name"), e.get("value") == null ? null : String.valueOf(e.get("value"))));
        }
        return env;
    }

    /**
     * Spring's relaxed binding of environment variables (SystemEnvironmentPropertyMapper): upper case,
     * '_' for '.', and '-' either removed or (legacy form) turned into '_'. Map properties take any suffix.
     */
    static boolean bindsToProperty(String envName) {
        for (String key : propertyKeys) {
            String dotted = key.replace("[", "").replace("]", "").replace(".", "_").toUpperCase(Locale.ROOT);
            for (String canonical : List.of(dotted.replace("-", ""), dotted.replace("-", "_"))) {
                if (canonical.equals(envName)) {
                    return true;
                }
                if (mapPropertyKeys.contains(key) && envName.startsWith(canonical + "_")) {
                    return true;
                }
            }
        }
        return false;
    }

    static List<Path> manifests() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT.resolve("k8s"))) {
            return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
    }
}
