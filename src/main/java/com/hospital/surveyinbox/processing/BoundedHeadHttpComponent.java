package com.hospital.surveyinbox.processing;

import java.net.InetSocketAddress;
import java.net.Socket;
import org.apache.camel.component.http.HttpComponent;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.io.HttpClientConnectionManager;
import org.apache.hc.client5.http.socket.ConnectionSocketFactory;
import org.apache.hc.client5.http.socket.LayeredConnectionSocketFactory;
import org.apache.hc.client5.http.socket.PlainConnectionSocketFactory;
import org.apache.hc.client5.http.ssl.SSLConnectionSocketFactory;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.config.Registry;
import org.apache.hc.core5.http.config.RegistryBuilder;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.pool.PoolConcurrencyPolicy;
import org.apache.hc.core5.util.TimeValue;

/**
 * camel-http's component with a bound on an answer's head (its status line, each header line and the number of
 * headers): Apache HttpClient reads a head without any, and camel-http builds its connections without an
 * {@link Http1Config}, so a downstream sending one endless header line (or endless headers) filled the heap before
 * the call's deadline ended it ({@link DownstreamAnswerLimits} bounds the body, which comes after). A head past
 * the bounds fails the call as an I/O error: a system error, like an answer past {@code max-answer-bytes}.
 * With an SSL bundle ({@code adapter.http.ssl-bundle}), its TLS is the one of every {@code https} connection: the
 * bundle's trust, key and protocols as they are when the connection opens (a reloaded bundle's from then on), the host
 * name checked by camel-http's verifier. Everything else is camel-http's own connection pool, built as it builds it.
 */
final class BoundedHeadHttpComponent extends HttpComponent {

    private final Http1Config head;
    /** The downstreams' TLS (adapter.http.ssl-bundle); its current() null: camel-http's own (the JVM's default trust). */
    private volatile DownstreamTls tls = DownstreamTls.none();

    BoundedHeadHttpComponent(int maxHeaderBytes, int maxHeaders) {
        this.head = Http1Config.custom().setMaxLineLength(maxHeaderBytes).setMaxHeaderCount(maxHeaders).build();
    }

    void useTls(DownstreamTls tls) {
        this.tls = tls;
    }

    @Override
    protected Registry<ConnectionSocketFactory> createConnectionRegistry(javax.net.ssl.HostnameVerifier hostnameVerifier,
            org.apache.camel.support.jsse.SSLContextParameters parameters, boolean useSystemProperties)
            throws java.security.GeneralSecurityException, java.io.IOException {
        if (tls.current() == null) {
            return super.createConnectionRegistry(hostnameVerifier, parameters, useSystemProperties);
        }
        // with a bundle, Camel's own TLS settings (sslContextParameters, global SSL parameters, useSystemProperties)
        // are not read: the routes set none
        return RegistryBuilder.<ConnectionSocketFactory>create()
                .register("http", PlainConnectionSocketFactory.getSocketFactory())
                .register("https", new CurrentTls(hostnameVerifier))
                .build();
    }

    /**
     * An endpoint's https sockets, made with the bundle's TLS as it is when each connection opens: a reloaded bundle
     * (a renewed client certificate, a new CA) is used by the next connection of every endpoint, without a restart.
     * Connections already pooled keep the TLS they were opened with until they close. It must stay a
     * {@link LayeredConnectionSocketFactory}: HttpClient layers TLS only over such a factory (its connection operator
     * checks for the interface), and over any other would connect in plain TCP (DownstreamTlsTest counts TLS requests).
     */
    private final class CurrentTls implements LayeredConnectionSocketFactory {
        private final javax.net.ssl.HostnameVerifier verifier;
        private DownstreamTls.Tls built;
        private SSLConnectionSocketFactory factory;

        CurrentTls(javax.net.ssl.HostnameVerifier verifier) {
            this.verifier = verifier;
        }

        private synchronized SSLConnectionSocketFactory factory() {
            DownstreamTls.Tls now = tls.current();
            if (now != built) {
                factory = new SSLConnectionSocketFactory(now.context(), now.protocols(), now.ciphers(), verifier);
                built = now;
            }
            return factory;
        }

        @Override
        public Socket createSocket(HttpContext context) throws java.io.IOException {
            return factory().createSocket(context);
        }

        @Override
        public Socket createSocket(java.net.Proxy proxy, HttpContext context) throws java.io.IOException {
            return factory().createSocket(proxy, context);
        }

        @Override
        public Socket connectSocket(TimeValue connectTimeout, Socket socket, HttpHost host,
                InetSocketAddress remote, InetSocketAddress local, HttpContext context) throws java.io.IOException {
            return factory().connectSocket(connectTimeout, socket, host, remote, local, context);
        }

        @Override
        public Socket connectSocket(Socket socket, HttpHost host, InetSocketAddress remote, InetSocketAddress local,
                org.apache.hc.core5.util.Timeout connectTimeout, Object attachment, HttpContext context) throws java.io.IOException {
            return factory().connectSocket(socket, host, remote, local, connectTimeout, attachment, context);
        }

        @Override
        public Socket createLayeredSocket(Socket socket, String target, int port, HttpContext context) throws java.io.IOException {
            return factory().createLayeredSocket(socket, target, port, context);
        }

        @Override
        public Socket createLayeredSocket(Socket socket, String target, int port, Object attachment, HttpContext context)
                throws java.io.IOException {
            return factory().createLayeredSocket(socket, target, port, attachment, context);
        }
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
