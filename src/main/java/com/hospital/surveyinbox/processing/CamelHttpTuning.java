package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import org.apache.camel.component.http.HttpComponent;
import org.apache.camel.spi.ComponentCustomizer;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Gives every downstream HTTP call the timeouts of {@code adapter.http.*}: camel-http only takes them
 * as component-level milliseconds, and a call without a timeout can hold a worker forever. Turns off
 * the client's own retries: a retry is an attempt of the row, counted and visible in its history. Bounds what
 * an answer may be ({@link DownstreamAnswerLimits}), asks for no compressed answers, and keeps no cookies: the
 * client is one per endpoint and pod, shared by every patient's calls (a session cookie of one downstream went
 * with every later call, to the others behind the same host too). Bounds an answer's head too: the {@code http} and
 * {@code https} components are {@link BoundedHeadHttpComponent}s (Camel takes a component of that name from the
 * registry before making its own), whose https connections use the SSL bundle {@code adapter.http.ssl-bundle} names
 * ({@link DownstreamTls}).
 */
@Configuration
public class CamelHttpTuning {

    @Bean("http")
    HttpComponent http(AdapterProperties properties, DownstreamTls downstreamTls) {
        return boundedHead(properties.getHttp(), downstreamTls);
    }

    @Bean("https")
    HttpComponent https(AdapterProperties properties, DownstreamTls downstreamTls) {
        return boundedHead(properties.getHttp(), downstreamTls);
    }

    /** The bundle {@code adapter.http.ssl-bundle} names, followed as it is reloaded; none: the JVM's default trust. */
    @Bean
    DownstreamTls downstreamTls(AdapterProperties properties, org.springframework.beans.factory.ObjectProvider<SslBundles> bundles) {
        String name = properties.getHttp().getSslBundle();
        return name == null ? DownstreamTls.none() : DownstreamTls.of(bundles.getObject(), name);
    }

    /** A component with the bounded head and the downstreams' TLS. */
    private static HttpComponent boundedHead(AdapterProperties.Http http, DownstreamTls tls) {
        BoundedHeadHttpComponent component = new BoundedHeadHttpComponent(http.getMaxHeaderBytes(), http.getMaxHeaders());
        component.useTls(tls);
        return component;
    }

    /**
     * Pooled connections per downstream host: at least one for every call that can run at once — a call per worker
     * (adapter.kafka.workers) and per synchronous registration (adapter.inbox.synchronous-concurrency), the job's
     * reply, a lookup beside them — and never fewer than 50. A fixed 50 made workers raised to 64 to drain a backlog
     * wait for a connection up to the connect timeout and fail as system errors: a local shortage counted against
     * the downstream's circuit as an outage (one host may serve all three downstreams: a gateway).
     */
    static int connectionsPerHost(AdapterProperties properties) {
        return Math.max(50, properties.getKafka().getWorkers() + properties.getInbox().getSynchronousConcurrency() + 2);
    }

    @Bean
    ComponentCustomizer httpTimeouts(AdapterProperties properties) {
        // applied last: camel-http-starter's own customizer copies its defaults (20 connections per host, 200 in all,
        // 3-minute connect, socket and pool timeouts) onto the component, and at the same order the two ran in either
        // order: a context whose defaults came last ran on them (HostileAnswersTest found 20 connections in the suite)
        return ComponentCustomizer.builder(HttpComponent.class).withOrder(org.apache.camel.Ordered.LOWEST).build(component -> {
            long connect = properties.getHttp().getConnectTimeout().toMillis();
            long response = properties.getHttp().getResponseTimeout().toMillis();
            component.setConnectTimeout(connect);
            component.setConnectionRequestTimeout(connect);
            component.setResponseTimeout(response);
            component.setSoTimeout(response);
            int perHost = connectionsPerHost(properties);
            component.setMaxTotalConnections(3 * perHost);
            component.setConnectionsPerRoute(perHost);
            // the inbox's attempts are the only retry ledger: Apache HttpClient would otherwise repeat a
            // GET answered 503/429 (after a 1 s pause, holding a worker) or a failed connection, unrecorded
            DownstreamAnswerLimits limits = new DownstreamAnswerLimits(properties.getHttp().getMaxAnswerBytes(),
                    properties.getHttp().getCallDeadline());
            // on the client builder itself: the component's own flags are not handed to endpoints made by toD
            component.setHttpClientConfigurer(builder -> builder.disableAutomaticRetries()
                    .disableContentCompression()
                    .disableCookieManagement()
                    .addExecInterceptorFirst("adapter-answer-limits", limits));
        });
    }
}
