package com.hospital.surveyinbox.config;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.Executor;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * The public port's request threads, busy and queued: a pod whose 200 threads are all held (a slow database, a burst
 * of synchronous registrations) turns further connections away once its queue (server.tomcat.threads.
 * max-queue-capacity) is full, and those never reach the reception's histogram: the ingress answers them 502.
 * Spring Boot's own Tomcat thread metrics need Tomcat's MBean registry, off by default because it registers an
 * MBean per request processor; these read the connector's executor directly. Alert SurveyInboxRequestThreadsSaturated.
 * The management port (8081) has threads of its own and is not counted.
 */
@Component
class RequestThreadGauges implements ApplicationListener<WebServerInitializedEvent> {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RequestThreadGauges.class);
    private final MeterRegistry meters;

    RequestThreadGauges(MeterRegistry meters) {
        this.meters = meters;
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        if (event.getApplicationContext().getServerNamespace() != null // the management server's context
                || !(event.getWebServer() instanceof TomcatWebServer tomcat)) {
            return;
        }
        Executor executor = tomcat.getTomcat().getConnector().getProtocolHandler().getExecutor();
        if (!(executor instanceof org.apache.tomcat.util.threads.ThreadPoolExecutor pool)) {
            // e.g. virtual threads: no pool to read, and SurveyInboxRequestThreadsSaturated has nothing to watch
            log.warn("Request thread gauges not registered: the connector's executor is a {}",
                    executor == null ? null : executor.getClass().getName());
            return;
        }
        Gauge.builder("adapter.http.threads.busy", pool, org.apache.tomcat.util.threads.ThreadPoolExecutor::getActiveCount)
                .description("public port's request threads serving a request now").register(meters);
        Gauge.builder("adapter.http.threads.max", pool, org.apache.tomcat.util.threads.ThreadPoolExecutor::getMaximumPoolSize)
                .description("public port's request threads at most (server.tomcat.threads.max)").register(meters);
        Gauge.builder("adapter.http.threads.queued", pool, p -> p.getQueue().size())
                .description("requests waiting for a request thread (at most server.tomcat.threads.max-queue-capacity)")
                .register(meters);
    }
}
