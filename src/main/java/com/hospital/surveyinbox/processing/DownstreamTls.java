package com.hospital.surveyinbox.processing;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * The TLS of every https downstream connection when {@code adapter.http.ssl-bundle} names a Spring Boot SSL bundle:
 * its trust (a hospital's own CA), key (a client certificate) and protocols, as they are now. One for the {@code http}
 * and {@code https} components: a bundle with reload-on-update (cert-manager renewing the files) is read once per
 * reload and used by the next connection of every endpoint, without a restart. A reload whose files cannot be read
 * (a half-written key) keeps the TLS in use and says so; the next update tries again.
 */
final class DownstreamTls {

    private static final Logger log = LoggerFactory.getLogger(DownstreamTls.class);

    /** What a connection is made with: an SSLContext is safe to share between threads. */
    record Tls(javax.net.ssl.SSLContext context, String[] protocols, String[] ciphers) {
    }

    private final java.util.concurrent.atomic.AtomicReference<Tls> current = new java.util.concurrent.atomic.AtomicReference<>();

    /** None: camel-http's own TLS (the JVM's default trust). */
    static DownstreamTls none() {
        return new DownstreamTls();
    }

    /**
     * The bundle {@code name} of {@code bundles}, followed as it is reloaded. A name no bundle has stops the start
     * (Boot's NoSuchSslBundleException names it): never a silent fall back to the JVM's trust, which would refuse a
     * hospital CA's certificates at the first call, or accept any public one.
     */
    static DownstreamTls of(SslBundles bundles, String name) {
        DownstreamTls tls = new DownstreamTls();
        // the handler first: a reload between the first read and the registration would otherwise never reach us
        bundles.addBundleUpdateHandler(name, bundle -> {
            try {
                tls.current.set(read(bundle));
                log.info("SSL bundle '{}' (adapter.http.ssl-bundle) reloaded: new https connections use it", name);
            } catch (RuntimeException e) {
                log.warn("SSL bundle '{}' (adapter.http.ssl-bundle) reloaded but unreadable ({}); https connections keep the "
                        + "TLS read before", name, e.getClass().getSimpleName());
            }
        });
        // unless a reload came between the registration and this read: its TLS is the newer
        tls.current.compareAndSet(null, read(bundles.getBundle(name)));
        return tls;
    }

    private static Tls read(SslBundle bundle) {
        return new Tls(bundle.createSslContext(), bundle.getOptions().getEnabledProtocols(), bundle.getOptions().getCiphers());
    }

    /** The TLS a connection opened now uses; null when no bundle is named. */
    Tls current() {
        return current.get();
    }
}
