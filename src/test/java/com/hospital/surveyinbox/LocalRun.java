package com.hospital.surveyinbox;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.EmbeddedServices;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

/**
 * {@code mvn spring-boot:test-run}: the service on 8080 (management 8081) with a real PostgreSQL 17,
 * Kafka (KRaft) and Redis started in-process, plus the downstream simulator on 8089 with the case
 * study's latency model — unless {@code adapter.legacy|account|survey.base-url} are given (env or args).
 */
public final class LocalRun {

    static final String LEGACY_USER = "legacy";
    static final String LEGACY_PASSWORD = "legacy-dev-secret";
    static final String OPS_USER = "ops";
    static final String OPS_PASSWORD = "ops-dev-secret";
    /** The simulator's port; {@code -Dlocal.simulator.port=0} picks a free one (the shutdown test). */
    static final int SIMULATOR_PORT = Integer.getInteger("local.simulator.port", 8089);

    private LocalRun() {
    }

    public static void main(String[] args) {
        if (System.getProperty(EmbeddedServices.KAFKA_OWN_PROCESS) == null) {
            System.setProperty(EmbeddedServices.KAFKA_OWN_PROCESS, "true"); // as in production; stops after the service
        }
        boolean external = System.getenv("ADAPTER_LEGACY_BASE_URL") != null || argsName(args, "adapter.legacy.base-url");
        EmbeddedServices services = EmbeddedServices.startForLocalRun(!external, SIMULATOR_PORT);
        if (services.simulator() != null) {
            services.simulator().setLatency(DownstreamSimulator.Latency.REALISTIC);
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(SurveyInboxAdapterApplication.class)
                // EmbeddedServices' one hook closes the context, then the services; Boot's own hook would race
                // it and stop Logback while Camel still logs its shutdown
                .registerShutdownHook(false)
                .profiles("dev")
                .properties(
                        "adapter.security.legacy.username=" + LEGACY_USER,
                        "adapter.security.legacy.password=" + LEGACY_PASSWORD,
                        "adapter.security.ops.username=" + OPS_USER,
                        "adapter.security.ops.password=" + OPS_PASSWORD,
                        // on the test classpath for the benchmark's peer only; absent from the production jar
                        "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration")
                .run(args);
        Environment env = context.getEnvironment();
        String port = env.getProperty("local.server.port", env.getProperty("server.port"));
        String mgmt = env.getProperty("local.management.port", env.getProperty("management.server.port"));
        System.out.printf("""

                ================ survey-inbox-adapter (local run) ================
                reception   POST http://localhost:%1$s/legacy/survey-send-info   (basic %3$s:%4$s)
                operators   GET  http://localhost:%1$s/ops/inbox/stats           (basic %5$s:%6$s)
                actuator         http://localhost:%2$s/actuator/health | /actuator/prometheus
                downstream       %7$s
                postgres         %8$s (user postgres)
                kafka            %9$s
                redis            localhost:%10$d
                ==================================================================
                %n""", port, mgmt, LEGACY_USER, LEGACY_PASSWORD, OPS_USER, OPS_PASSWORD,
                services.simulator() != null
                        ? "simulator " + services.simulator().baseUrl() + " (stats: GET /_sim/stats)"
                        : env.getProperty("adapter.legacy.base-url") + " (external)",
                services.jdbcUrl(), services.kafkaBrokers(), services.redisPort());
    }

    private static boolean argsName(String[] args, String key) {
        for (String arg : args) {
            if (arg.startsWith("--" + key + "=")) {
                return true;
            }
        }
        return false;
    }
}
