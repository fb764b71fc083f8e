package com.hospital.surveyinbox.processing;

import org.apache.camel.component.http.HttpComponent;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.io.HttpClientConnectionManager;
import org.apache.hc.client5.http.socket.ConnectionSocketFactory;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.config.Registry;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.util.TimeValue;

/**
 * camel-http's component with a bound on an answer's head (its status line, each header line and the number of
 * headers): Apache HttpClient reads a head without any, and camel-http builds its connections without an
 * {@link Http1Config}, so a downstream sending one endless header line (or endless headers) filled the heap before
 * the call's deadline ended it ({@link DownstreamAnswerLimits} bounds the body, which comes after). A head past
 * the bounds fails the call as an I/O error: a system error, like an answer past {@code max-answer-bytes}.
 * Everything else is camel-http's own connection pool, built as it builds it.
 */
final class BoundedHeadHttpComponent extends HttpComponent {

    private final Http1Config head;

    BoundedHeadHttpComponent(int maxHeaderBytes, int maxHeaders) {
        this.head = Http1Config.custom().setMaxLineLength(maxHeaderBytes).setMaxHeaderCount(maxHeaders).build();
    }

    @Override
    protected HttpClientConnectionManager createConnectionManager(Registry<ConnectionSocketFactory> registry,
            int maxTotalConnections, int connectionsPerRoute, SocketConfig defaultSocketConfig) {
        PoolingHttpClientConnectionManager pool = new PoolingHttpClientConnectionManager(registry,
                PoolConcurrencyPolicy.STRICT, TimeValue.ofMilliseconds(getConnectionTimeToLive()),
                ManagedHttpClientConnectionFactory.builder().http1Config(head).build());
        int total = maxTotalConnections > 0 ? maxTotalConnections : getMaxTotalConnections();
        if (total > 0) {
            pool.setMaxTotal(total);
        }
        int perRoute = connectionsPerRoute > 0 ? connectionsPerRoute : getConnectionsPerRoute();
        if (perRoute > 0) {
            pool.setDefaultMaxPerRoute(perRoute);
        }
        pool.setDefaultSocketConfig(defaultSocketConfig);
        return pool;
    }
}
