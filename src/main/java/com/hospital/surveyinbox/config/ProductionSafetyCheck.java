package com.hospital.surveyinbox.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.stereotype.Component;

/**
 * In the {@code prod} profile (in any letter case: Spring's own profile matching is case-sensitive, so
 * {@code Prod} would otherwise skip the check) the service refuses to start with credentials anyone could
 * know (empty, short, equal to the user name, one of the repository's dev/test values, or the legacy
 * sender's password equal to the operators'), with the payload stored in clear, believing X-Forwarded-For
 * from everywhere, presuming a row abandoned sooner than a live worker may take on it, or letting receptions hold
 * every request thread ({@code adapter.reception.max-in-flight}). Fails the boot, so a
 * misconfigured pod never becomes ready.
 */
@Component
public class ProductionSafetyCheck implements InitializingBean {

    static final int MIN_PASSWORD_LENGTH = 16;
    static final Set<String> KNOWN_DEFAULTS = Set.of("legacy-dev-secret", "ops-dev-secret", "legacy-test-secret",
            "ops-test-secret", "password", "changeit", "changeme", "secret", "admin");

    private final AdapterProperties properties;
    private final org.springframework.core.env.Environment environment;
    private final org.springframework.beans.factory.ObjectProvider<javax.sql.DataSource> dataSource;

    public ProductionSafetyCheck(AdapterProperties properties, org.springframework.core.env.Environment environment,
                                 org.springframework.beans.factory.ObjectProvider<javax.sql.DataSource> dataSource) {
        this.properties = properties;
        this.environment = environment;
        this.dataSource = dataSource;
    }

    /**
     * Profile names an operator means as production (production, prd, live, a site's prod-kr): without {@code prod}
     * itself they skip every check here. Whole names or a prefix before a separator, so staging's preprod, non-prod
     * or delivery are not taken for it.
     */
    private static final java.util.regex.Pattern PROD_LOOKALIKE = java.util.regex.Pattern.compile("(?i)(prod|prd|production|live)([-_.].*)?");

    /**
     * The profiles in effect: the active ones, else the default ones (SPRING_PROFILES_DEFAULT=prod loads
     * application-prod.yaml as an active prod would, and skipped every check here).
     */
    private String[] profiles() {
        return profiles(environment);
    }

    private static String[] profiles(org.springframework.core.env.Environment environment) {
        String[] active = environment.getActiveProfiles();
        return active.length > 0 ? active : environment.getDefaultProfiles();
    }

    /** Whether the profiles in effect include prod (in any letter case), as this check reads them. */
    static boolean prod(org.springframework.core.env.Environment environment) {
        return java.util.Arrays.stream(profiles(environment)).anyMatch("prod"::equalsIgnoreCase);
    }

    @Override
    public void afterPropertiesSet() {
        if (!prod(environment)) {
            // SPRING_PROFILES_ACTIVE=production (or prd, prod-kr) started like dev: the payload in clear, any password
            List<String> lookalikes = java.util.Arrays.stream(profiles())
                    .filter(profile -> PROD_LOOKALIKE.matcher(profile).matches()).toList();
            if (!lookalikes.isEmpty()) {
                throw new IllegalStateException("Refusing to start: the active profile " + String.join(", ", lookalikes)
                        + " reads as production but is not prod, so config/application-prod.yaml (encryption on) and the "
                        + "production checks would not apply; activate prod (beside a site's own profile: prod," + lookalikes.get(0) + ")");
            }
            return;
        }
        List<String> problems = new ArrayList<>();
        check("legacy", properties.getSecurity().getLegacy(), problems);
        check("ops", properties.getSecurity().getOps(), problems);
        AdapterProperties.Credentials legacy = properties.getSecurity().getLegacy();
        AdapterProperties.Credentials ops = properties.getSecurity().getOps();
        AdapterProperties.Credentials viewer = properties.getSecurity().getOpsViewer();
        if (viewer != null) {
            check("ops-viewer", viewer, problems);
        }
        // every password either credential accepts (its next one too): one shared opened the operators' API with the
        // legacy sender's secret (or the operators' writes with a viewer's)
        List<String[]> all = new ArrayList<>(accepted("legacy", legacy));
        all.addAll(accepted("ops", ops));
        if (viewer != null) {
            all.addAll(accepted("ops-viewer", viewer));
        }
        for (int i = 0; i < all.size(); i++) {
            for (int j = i + 1; j < all.size(); j++) {
                String[] l = all.get(i);
                String[] o = all.get(j);
                boolean sameCredential = l[0].substring(0, l[0].lastIndexOf('.')).equals(o[0].substring(0, o[0].lastIndexOf('.')));
                if (!sameCredential && l[1] != null && !l[1].isBlank() && l[1].equals(o[1])) {
                    problems.add(l[0] + " and " + o[0] + " must differ");
                }
            }
        }
        if (!properties.getCrypto().isEnabled()) {
            problems.add("adapter.crypto.enabled must be true: the payload holds patient data");
        }
        if (!properties.getRetention().isEnabled()) {
            // its gauge reads -1 (off) and no alert fires on that: payloads and the downstreams' texts about each row
            // stayed for good, unnoticed. A pod kept out of the jobs has adapter.inbox.redeliver-enabled=false instead
            problems.add("adapter.retention.enabled must be true: the payload holds patient data, and only retention removes it");
        }
        redisAuthenticated(problems);
        servicesNotThisPod(problems);
        downstreamsEncrypted(problems);
        int requestThreads = environment.getProperty("server.tomcat.threads.max", Integer.class, 200);
        if (properties.getReception().getMaxInFlight() >= requestThreads) {
            problems.add("adapter.reception.max-in-flight (" + properties.getReception().getMaxInFlight() + ") must be below "
                    + "server.tomcat.threads.max (" + requestThreads + "): the threads left over serve the operators' API "
                    + "while receptions wait on a slow database");
        }
        forwardedHeaders(problems);
        logsCarryNoPatientData(problems);
        shutdownCoversARow(problems);
        webShutdownCoversASynchronousRegistration(problems);
        stuckRows(problems);
        if (properties.getInbox().getRetryDelay().compareTo(java.time.Duration.ofSeconds(1)) < 0) {
            // 0 (the tests' value) spaces nothing: a FAILED row's stray event (a rebalance, a successor's release)
            // retries it at once and burns its attempts toward DEAD within seconds, and an owed reply's backoff
            // (retry-delay doubled per failed try) stays 0: a refused reply is sent again at every tick, for ever
            problems.add("adapter.inbox.retry-delay (" + properties.getInbox().getRetryDelay() + ") must be at least 1 s: it "
                    + "spaces a failed row's attempts and a refused reply's tries");
        }
        String cronGap = properties.getInbox().redeliverCronGap();
        if (cronGap != null) {
            problems.add(cronGap + " (the silent-job alert reads 10 minutes without a tick as a stopped job)");
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("Refusing to start in prod: " + String.join("; ", problems));
        }
    }

    /**
     * The calls carry patients' names, phone numbers and consents (the guest, the bundle, the patient lookup's answer):
     * over {@code http://} anyone on the path reads them. Refused unless {@code adapter.http.plain-http-allowed} says
     * something else encrypts that traffic (a service mesh's mutual TLS between pods). The URL itself is not printed
     * (its user-info would be a secret).
     */
    private void downstreamsEncrypted(List<String> problems) {
        if (properties.getHttp().isPlainHttpAllowed()) {
            return;
        }
        java.util.Map<String, AdapterProperties.Downstream> downstreams = new java.util.LinkedHashMap<>();
        downstreams.put("legacy", properties.getLegacy());
        downstreams.put("account", properties.getAccount());
        downstreams.put("survey", properties.getSurvey());
        downstreams.forEach((name, downstream) -> {
            String url = downstream == null ? null : downstream.getBaseUrl();
            if (url != null && url.regionMatches(true, 0, "http://", 0, 7)) {
                problems.add("adapter." + name + ".base-url must be https: its calls carry patient data (set "
                        + "adapter.http.plain-http-allowed=true only where a service mesh encrypts the traffic between pods)");
            }
        });
    }

    /**
     * The broker's and Redis's addresses fall back to this pod ({@code localhost:9092}, Boot's {@code localhost:6379})
     * when the Secret lacks SPRING_KAFKA_BOOTSTRAP_SERVERS or SPRING_DATA_REDIS_HOST (a typo, Boot 2's SPRING_REDIS_HOST):
     * the pods started, turned ready (readiness leaves the broker out, by design) and answered 200 while every
     * publish failed, unnoticed until the unpublished-events alert ten minutes later. Refused when the address was
     * not set, not for its value: a proxy or TLS sidecar on localhost, set on purpose, passes. Names no value.
     */
    private void servicesNotThisPod(List<String> problems) {
        org.springframework.boot.context.properties.bind.Binder binder = org.springframework.boot.context.properties.bind.Binder.get(environment);
        String brokers = environment.getProperty("camel.component.kafka.brokers", "");
        if (!environment.containsProperty("spring.kafka.bootstrap-servers")
                && java.util.Arrays.stream(brokers.split(",")).map(String::strip).filter(b -> !b.isEmpty())
                        .allMatch(ProductionSafetyCheck::loopback)) {
            problems.add("camel.component.kafka.brokers names no broker but this pod, config/application.yaml's fallback: set "
                    + "spring.kafka.bootstrap-servers (SPRING_KAFKA_BOOTSTRAP_SERVERS); every event would fail to publish "
                    + "while the pod answers 200");
        }
        boolean redisSet = java.util.stream.Stream.of("spring.data.redis.host", "spring.data.redis.url",
                        "spring.data.redis.sentinel.master")
                .anyMatch(key -> !binder.bind(key, String.class).orElse("").isBlank())
                || java.util.stream.Stream.of("spring.data.redis.sentinel.nodes", "spring.data.redis.cluster.nodes")
                        .anyMatch(key -> binder.bind(key, org.springframework.boot.context.properties.bind.Bindable.listOf(String.class))
                                .map(nodes -> !nodes.isEmpty()).orElse(false));
        if (!redisSet) {
            problems.add("spring.data.redis.host is not set (SPRING_DATA_REDIS_HOST; or spring.data.redis.url, sentinel or "
                    + "cluster nodes): Boot falls back to localhost, and every consent lookup would go to the slow legacy "
                    + "system the cache is for");
        }
    }

    /** A broker address ({@code host:port}, {@code [v6]:port}, {@code PLAINTEXT://host:port}) that is this machine, or none. */
    static boolean loopback(String address) {
        String host = address.strip();
        int scheme = host.indexOf("://");
        if (scheme >= 0) {
            host = host.substring(scheme + 3);
        }
        if (host.startsWith("[")) {
            host = host.substring(1, Math.max(1, host.indexOf(']')));
        } else if (host.indexOf(':') == host.lastIndexOf(':') && host.indexOf(':') >= 0) {
            host = host.substring(0, host.indexOf(':'));
        }
        host = host.toLowerCase(java.util.Locale.ROOT);
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        return host.isEmpty() || host.equals("localhost") || host.endsWith(".localhost") || host.startsWith("127.")
                || host.equals("::1") || host.equals("0:0:0:0:0:0:0:1") || host.equals("0.0.0.0") || host.startsWith("::ffff:127.");
    }

    /**
     * A Redis without a password: a cached consent list is taken as the legacy system's answer (a bundle goes out with
     * it) and a hit is never looked up again, so whatever can reach Redis (another workload on a shared instance, a
     * mistyped redis-cli) could decide which consent forms patients get, for as long as the key lives. The Secret
     * carries SPRING_DATA_REDIS_PASSWORD (docs/deploying.md). With spring.data.redis.url set, Boot reads the
     * credentials from the URL alone (the password property is ignored), so the URL's are judged. An SSL bundle is no
     * login (a truststore alone is the usual one, and a client certificate still logs in as Redis's default user).
     */
    private void redisAuthenticated(List<String> problems) {
        if (redisAuthenticated(environment)) {
            return;
        }
        problems.add("spring.data.redis.password is empty (SPRING_DATA_REDIS_PASSWORD; with spring.data.redis.url, the "
                + "URL's password): cached consent lists decide what a bundle holds, and an unauthenticated Redis lets "
                + "anyone who reaches it write them");
    }

    /** Whether Redis is logged into with the password Boot uses: the URL's when a URL is set, else the property. */
    public static boolean redisAuthenticated(org.springframework.core.env.Environment environment) {
        String url = environment.getProperty("spring.data.redis.url");
        if (url != null && !url.isBlank()) {
            try {
                String userInfo = java.net.URI.create(url.strip()).getUserInfo();
                int colon = userInfo == null ? -1 : userInfo.indexOf(':');
                // redis://:password@host and redis://user:password@host; redis://password@host is Boot's password too
                String password = userInfo == null ? null : colon < 0 ? userInfo : userInfo.substring(colon + 1);
                return password != null && !password.isBlank();
            } catch (IllegalArgumentException e) {
                return false;
            }
        }
        String password = environment.getProperty("spring.data.redis.password");
        return password != null && !password.isBlank();
    }

    /**
     * Loggers that write what the service sends and receives when set below INFO: request URLs (a patient number is a
     * path segment of the patient lookup and a query parameter of the guest search), headers and bodies (names,
     * mobile numbers), bound SQL values. {@code web} and {@code sql} are Boot's logger groups. Every name above one
     * of them (root, {@code org}, {@code org.apache}) sets it too.
     */
    static final List<String> DATA_LOGGERS = List.of("org.apache.camel", "org.apache.hc", "org.springframework.jdbc",
            "org.hibernate", "org.springframework.web", "org.springframework.http", "org.springframework.data.redis",
            "io.lettuce", "org.apache.tomcat", "org.apache.coyote", "org.apache.catalina", "web", "sql");

    /**
     * Turning up logging to look into an incident (LOGGING_LEVEL_ROOT=DEBUG, LOGGING_LEVEL_ORG_APACHE_CAMEL=TRACE) or
     * Camel's tracer on wrote patient numbers, names and mobile numbers into the logs, kept outside the payload's
     * encryption and retention (CONTRACT 6). The service's own loggers (com.hospital.surveyinbox) never log patient
     * data and may go to DEBUG.
     */
    private void logsCarryNoPatientData(List<String> problems) {
        org.springframework.boot.context.properties.bind.Binder binder = org.springframework.boot.context.properties.bind.Binder.get(environment);
        java.util.Map<String, org.springframework.boot.logging.LogLevel> levels;
        try {
            levels = binder
                    .bind("logging.level", org.springframework.boot.context.properties.bind.Bindable.mapOf(String.class,
                            org.springframework.boot.logging.LogLevel.class))
                    .orElse(java.util.Map.of());
        } catch (RuntimeException e) {
            problems.add("logging.level.* must be levels (TRACE..OFF): " + e.getMessage());
            return;
        }
        // a group's level is its members' (Boot's web and sql groups, and any a deployer defines)
        java.util.Map<String, List<String>> groups = new java.util.HashMap<>(java.util.Map.of("web", List.of("org.springframework.web"),
                "sql", List.of("org.springframework.jdbc", "org.hibernate")));
        binder.bind("logging.group",
                org.springframework.boot.context.properties.bind.Bindable.mapOf(String.class, String[].class))
                .ifBound(defined -> defined.forEach((group, members) -> groups.put(group, List.of(members))));
        new java.util.TreeMap<>(levels).forEach((name, level) -> {
            if (level != null && level.ordinal() < org.springframework.boot.logging.LogLevel.INFO.ordinal()
                    && (writesPatientData(name) || groups.getOrDefault(name, List.of()).stream()
                            .anyMatch(ProductionSafetyCheck::writesPatientData))) {
                problems.add("logging.level." + name + " (" + level + ") must be INFO or above: below it " + name
                        + " logs request URLs, headers, bodies or bound SQL values, which carry patient numbers and names; "
                        + "look into an incident in dev, or with com.hospital.surveyinbox at DEBUG");
            }
        });
        // Boot's own switches: debug (any value but false) sets the web and sql groups to DEBUG, trace org.springframework
        // to TRACE; a logging.config of the deployer's own sets levels this check cannot read
        for (String bootSwitch : List.of("debug", "trace")) {
            String value = environment.getProperty(bootSwitch);
            if (value != null && !"false".equalsIgnoreCase(value.strip())) {
                problems.add(bootSwitch + " (" + bootSwitch.toUpperCase(java.util.Locale.ROOT) + ") must be unset or false: it "
                        + "sets Spring's web and SQL loggers below INFO, which log request details and bound SQL values");
            }
        }
        if (environment.getProperty("logging.config") != null) {
            problems.add("logging.config must be unset: its levels are not checked here (patient data below INFO)");
        }
        // a heap dump holds decrypted payloads, the payload keys and the database password; the loggers endpoint sets
        // any level at run time (past the check above); env and configprops show settings; every endpoint on the
        // management port answers without a login (the NetworkPolicy alone keeps callers out)
        // bound as Boot binds it (a comma list, a YAML list, ..._INCLUDE_0), compared as Boot compares endpoint ids
        List<String> beyond = binder
                .bind("management.endpoints.web.exposure.include",
                        org.springframework.boot.context.properties.bind.Bindable.listOf(String.class))
                .orElse(List.of()).stream().map(String::strip).filter(id -> !id.isEmpty())
                .filter(id -> !Set.of("health", "info", "prometheus", "metrics").contains(id.toLowerCase(java.util.Locale.ROOT)))
                .toList();
        if (!beyond.isEmpty()) {
            problems.add("management.endpoints.web.exposure.include must name only health, info, prometheus or metrics (not "
                    + String.join(", ", beyond) + "): a heap dump holds decrypted payloads and keys, loggers sets DEBUG "
                    + "at run time, and the management port answers without a login");
        }
        // the management port answers without a login: on the public port (unset, or the same) /actuator/prometheus and
        // the health groups would answer whoever reaches 8080, past the NetworkPolicy's port rule (0 and 0: two ports
        // the system picks, apart)
        // compared as the numbers Boot binds (08081 is 8081)
        String managementPort = environment.getProperty("management.server.port");
        Integer serverPort = environment.getProperty("server.port", Integer.class, 8080);
        Integer management = managementPort == null || managementPort.isBlank() ? null
                : environment.getProperty("management.server.port", Integer.class);
        if (management == null || (management.equals(serverPort) && serverPort != 0)) {
            problems.add("management.server.port must be set apart from server.port (" + serverPort + "): the "
                    + "actuator answers without a login, which only a port of its own keeps off the public one");
        }
        // camel-http's activity log writes headers and bodies at INFO
        for (String tracing : List.of("camel.main.tracing", "camel.trace.enabled", "camel.main.log-exhausted-message-body",
                "camel.component.http.log-http-activity")) {
            if (Boolean.TRUE.equals(environment.getProperty(tracing, Boolean.class))) {
                problems.add(tracing + " must be false: it logs message bodies, which carry patient data");
            }
        }
    }

    static boolean writesPatientData(String logger) {
        String name = logger.strip().toLowerCase(java.util.Locale.ROOT);
        return name.equals("root") || DATA_LOGGERS.stream().anyMatch(data -> data.equals(name)
                || data.startsWith(name + ".") || name.startsWith(data + "."));
    }

    /**
     * The client address decides the failed-authentication limit: X-Forwarded-For must be believed only from
     * named proxies. Refused: a trusted range that is everything (0.0.0.0/0, ::/0), and Tomcat's own forwarded
     * headers ("native", also what Spring Boot picks by itself on Kubernetes when the key is unset, or
     * "framework"), which trust the header from every private address unless internal proxies are named.
     */
    private void forwardedHeaders(List<String> problems) {
        for (String range : properties.getSecurity().getTrustedProxies()) {
            if (ClientAddress.Cidr.parse(range).tooBroad()) {
                problems.add("adapter.security.trusted-proxies must not contain " + range
                        + " (broader than /8): X-Forwarded-For would be believed from anyone; name the ingress's range");
            }
        }
        String strategy = environment.getProperty("server.forward-headers-strategy");
        boolean platformForwards = strategy == null && org.springframework.boot.cloud.CloudPlatform.getActive(environment) != null
                && org.springframework.boot.cloud.CloudPlatform.getActive(environment).isUsingForwardHeaders();
        boolean tomcatForwards = strategy != null && !"none".equalsIgnoreCase(strategy.strip());
        if ((platformForwards || tomcatForwards) && environment.getProperty("server.tomcat.remoteip.internal-proxies") == null) {
            problems.add("server.forward-headers-strategy must be none (the service reads X-Forwarded-For from "
                    + "adapter.security.trusted-proxies itself); Tomcat would trust it from every private address");
        }
    }

    /**
     * Downstream call sites of the shipped routes (send, resend and submit exclude each other, so their sum bounds one
     * row's calls, its reply included); ManifestConsistencyTest counts them in {@code routes/} and pins this.
     */
    public static final int ROW_CALLS = 9;

    /**
     * A row's own statements: before its calls the claim and the resend check, after them the outcome, the reply's
     * claim and result, the successor's lookup. Not counted: a statement's tries again while the database does not take
     * it (up to 3 more each, 8 for a claim that got no answer and for the outcome's record, inbox-process-row-errors);
     * a row caught in such an outage at shutdown is left to the stuck-row reset, its claim fenced.
     */
    public static final int ROW_STATEMENTS = 6;

    /**
     * Downstream call sites of a synchronous registration (rollback toggle: inbox-register + inbox-consents);
     * ManifestConsistencyTest counts them in {@code routes/} and pins this.
     */
    public static final int SYNCHRONOUS_CALLS = 8;

    /**
     * A synchronous registration's statements on the main pool: its claim (nothing unfinished of the subject, an
     * unknown Idempotency-Key, the subject's lease: one statement), the key read again once the lease is held, the
     * resend check, the record of the registration and the lease given back. Not counted: the record's retries while
     * the database does not take it, and the lookup of a key the record found taken (a rare case of the toggle's own
     * rollout).
     */
    public static final int SYNCHRONOUS_STATEMENTS = 5;

    /**
     * {@code spring.lifecycle.timeout-per-shutdown-phase} must cover a synchronous registration whose every wait runs
     * out (the request thread holds it): Tomcat stopped sooner, the sender got a 502 for a message that was then
     * registered, and sent it again.
     */
    private void webShutdownCoversASynchronousRegistration(List<String> problems) {
        long phase = org.springframework.boot.convert.DurationStyle.detectAndParse(
                environment.getProperty("spring.lifecycle.timeout-per-shutdown-phase", "30s")).toMillis();
        long worst = synchronousRegistrationMillis();
        if (worst > phase) {
            problems.add("spring.lifecycle.timeout-per-shutdown-phase (" + phase / 1000 + " s) must cover a synchronous "
                    + "registration whose every wait runs out (" + (worst + 999) / 1000 + " s: " + SYNCHRONOUS_CALLS
                    + " calls x (2 x adapter.http.connect-timeout + response-timeout) + the consent turn (2 x response-timeout) + "
                    + SYNCHRONOUS_STATEMENTS + " statements x (pool wait + socket timeout)); raise it with the pods' "
                    + "terminationGracePeriodSeconds and the ingress's proxy-read-timeout, or lower the timeouts");
        }
    }

    /** The longest a synchronous registration can take with this pod's settings (see SYNCHRONOUS_CALLS). */
    private long synchronousRegistrationMillis() {
        return synchronousRegistrationMillis(properties.getHttp(), statementMillis());
    }

    /**
     * The longest a synchronous registration can take, every wait run out: its calls to their deadline, the consent
     * turn, its statements to {@code statementMillis} each (the pool's wait and the socket timeout). Also the bound
     * of its subject's lease (reception/SynchronousRegistration).
     */
    public static long synchronousRegistrationMillis(AdapterProperties.Http http, long statementMillis) {
        return SYNCHRONOUS_CALLS * http.getCallDeadline().toMillis() + http.getResponseTimeout().multipliedBy(2).toMillis()
                + SYNCHRONOUS_STATEMENTS * statementMillis;
    }

    private long statementMillis() {
        return statementMillis(environment, dataSource.getIfAvailable());
    }

    /**
     * The longest one statement of the main pool can hold its caller: the pool's wait for a connection and the
     * driver's socket timeout, both as the pool will use them (a JDBC URL's {@code ?socketTimeout=} included).
     */
    public static long statementMillis(org.springframework.core.env.Environment environment, javax.sql.DataSource pool) {
        long wait = environment.getProperty("spring.datasource.hikari.connection-timeout", Long.class, 30_000L);
        try {
            if (pool != null && pool.isWrapperFor(com.zaxxer.hikari.HikariDataSource.class)) {
                wait = pool.unwrap(com.zaxxer.hikari.HikariDataSource.class).getConnectionTimeout();
            }
        } catch (java.sql.SQLException e) {
            // the setting's value, as written
        }
        return wait + socketTimeoutSeconds(pool) * 1000;
    }

    /**
     * {@code camel.main.shutdown-timeout} must cover a row whose every wait runs out, computed from the settings this
     * pod runs with: a slow legacy system answered by raising {@code adapter.http.response-timeout} (an environment
     * variable) would otherwise cut rows off at every rollout (left PROCESSING, registered again after
     * stuck-processing-after), and the stuck-row check below would compare with a bound no longer true.
     */
    private void shutdownCoversARow(List<String> problems) {
        long shutdownMillis = shutdownSeconds() * 1000;
        AdapterProperties.Http http = properties.getHttp();
        long perCall = http.getCallDeadline().toMillis(); // DownstreamAnswerLimits ends a call there
        long socketSeconds = socketTimeoutSeconds();
        if (socketSeconds <= 0) {
            problems.add("the PostgreSQL driver's socketTimeout must be set (seconds, > 0: config/application.yaml, or "
                    + "?socketTimeout= in SPRING_DATASOURCE_URL): without it a statement to a database that stopped answering "
                    + "waits forever, holding its worker and its row");
        }
        long statement = statementMillis();
        long publish = environment.getProperty("camel.component.kafka.max-block-ms", Long.class, 60_000L)
                + environment.getProperty("camel.component.kafka.delivery-timeout-ms", Long.class, 120_000L);
        long consentWait = http.getResponseTimeout().multipliedBy(2).toMillis(); // ConsentCache's turn
        long worst = ROW_CALLS * perCall + consentWait + ROW_STATEMENTS * statement + publish;
        if (worst > shutdownMillis) {
            problems.add("camel.main.shutdown-timeout (" + shutdownMillis / 1000 + " s) must cover a row whose every wait runs out ("
                    + (worst + 999) / 1000 + " s: " + ROW_CALLS + " calls x (2 x adapter.http.connect-timeout + response-timeout) + "
                    + "the consent turn (2 x response-timeout) + " + ROW_STATEMENTS + " statements x (pool wait + socket timeout) "
                    + "+ the successor's publish); raise it with "
                    + "the pods' terminationGracePeriodSeconds, or lower the timeouts");
        }
    }

    /**
     * The driver's socket timeout as the pool will use it: its data-source properties, where MainPoolStatementBound has
     * already put a {@code socketTimeout} of the JDBC URL and restored the spelling of one set by an environment
     * variable. 0 when unset.
     */
    private long socketTimeoutSeconds() {
        return socketTimeoutSeconds(dataSource.getIfAvailable());
    }

    private static long socketTimeoutSeconds(javax.sql.DataSource pool) {
        try {
            if (pool == null || !pool.isWrapperFor(com.zaxxer.hikari.HikariDataSource.class)) {
                return 0;
            }
            String value = pool.unwrap(com.zaxxer.hikari.HikariDataSource.class).getDataSourceProperties().getProperty("socketTimeout");
            return value == null ? 0 : Long.parseLong(value.strip());
        } catch (java.sql.SQLException | NumberFormatException e) {
            return 0;
        }
    }

    /**
     * A PROCESSING row untouched for {@code stuck-processing-after} is reset and claimed again, so a shorter value
     * than a live worker may take has a second worker register the row while the first still does, the resend call
     * included, which has no Idempotency-Key. {@code camel.main.shutdown-timeout} is sized for a row whose every
     * wait runs out (checked above); a statement the database did not take is tried again and can add to that, so
     * twice it is the least allowed, plus the outcome record's minute of tries and its read-back's (about 530 s with
     * the shipped settings; the default, PT15M, is 900 s). A claim's minute of tries (one that got no answer) does not
     * add: the try that finds its claim again renews the row's updated_at (find-own-claim.sql).
     */
    private void stuckRows(List<String> problems) {
        long worstRowSeconds = shutdownSeconds();
        // the record's tries, then the read-back's (find-own-outcome.sql) after a record that got no answer
        long recordSeconds = (2 * (OUTCOME_RECORD_PAUSES_MILLIS + OUTCOME_RECORD_TRIES * statementMillis()) + 999) / 1000;
        java.time.Duration stuck = properties.getInbox().getStuckProcessingAfter();
        if (stuck.compareTo(java.time.Duration.ofSeconds(2 * worstRowSeconds + recordSeconds)) <= 0) {
            problems.add("adapter.inbox.stuck-processing-after (" + stuck + ") must be longer than twice camel.main.shutdown-timeout ("
                    + worstRowSeconds + " s, what a live worker may take on a row) plus an outcome record's and its read-back's "
                    + "tries while the database is away (" + recordSeconds + " s): a row still being registered would be claimed and "
                    + "registered again");
        }
    }

    /**
     * The record of an outcome (routes/inbox-process.camel.yaml, inbox-process-row-outcome-unrecorded): 9 tries, the
     * pauses between them 0.5, 1, 2, 4, 8, 15, 15, 15 s.
     */
    static final int OUTCOME_RECORD_TRIES = 9;
    static final long OUTCOME_RECORD_PAUSES_MILLIS = 60_500;

    /** Camel's in-flight wait at shutdown (seconds), as Camel reads it (its own default 45). */
    private long shutdownSeconds() {
        return environment.getProperty("camel.main.shutdown-timeout", Long.class, 45L);
    }

    /** The passwords a credential accepts, each with its key: the password, and the next one while it is rotated. */
    private static List<String[]> accepted(String who, AdapterProperties.Credentials credentials) {
        List<String[]> all = new ArrayList<>();
        all.add(new String[] {"adapter.security." + who + ".password", credentials.getPassword()});
        if (credentials.getNextPassword() != null) {
            all.add(new String[] {"adapter.security." + who + ".next-password", credentials.getNextPassword()});
        }
        return all;
    }

    private static void check(String who, AdapterProperties.Credentials credentials, List<String> problems) {
        // the next password is accepted as the password is: the same floor
        for (String[] password : accepted(who, credentials)) {
            check(credentials.getUsername(), password[1], password[0], problems);
        }
    }

    private static void check(String user, String password, String key, List<String> problems) {
        if (password == null || password.isBlank()) {
            problems.add(key + " is empty");
        } else if (KNOWN_DEFAULTS.contains(password)) {
            problems.add(key + " is a known default");
        } else if (password.length() < MIN_PASSWORD_LENGTH) {
            problems.add(key + " is shorter than " + MIN_PASSWORD_LENGTH + " characters");
        } else if (password.equalsIgnoreCase(user)) {
            problems.add(key + " equals the user name");
        }
    }
}
