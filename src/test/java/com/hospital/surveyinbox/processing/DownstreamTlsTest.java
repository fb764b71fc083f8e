package com.hospital.surveyinbox.processing;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.BoundSettings;
import com.hospital.surveyinbox.support.DownstreamSimulator;
import com.hospital.surveyinbox.support.TestTls;
import java.util.Map;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Downstreams over TLS, as production's are: a hospital's APIs carry certificates of its own CA, which the JVM's
 * default trust does not know. {@code adapter.http.ssl-bundle} names a Spring Boot SSL bundle whose trust every https
 * call of the routes' http components uses; the host name is checked against the certificate whatever the trust. The
 * components are the service's own (CamelHttpTuning, wired by camel-spring-boot with its http starter), the
 * downstream the simulator behind TLS with a certificate for {@code localhost}. Before the setting, a private CA's
 * downstream could only be trusted JVM-wide (a truststore system property: every client of the JVM, the broker's and
 * Redis's included) and nothing in the suite had made a call over TLS.
 */
class DownstreamTlsTest {

    private static final DownstreamSimulator SIMULATOR = new DownstreamSimulator(0);
    private static final TestTls TLS = TestTls.localhost();
    private static final int PORT = SIMULATOR.serveTls(TLS.serverContext());

    private final ApplicationContextRunner runner = BoundSettings.runner()
            .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class,
                    org.apache.camel.spring.boot.CamelAutoConfiguration.class,
                    org.apache.camel.component.http.springboot.HttpComponentAutoConfiguration.class))
            .withUserConfiguration(CamelHttpTuning.class)
            .withPropertyValues("camel.main.name=downstream-tls-test");

    @AfterAll
    static void stopSimulator() {
        SIMULATOR.stop();
    }

    /** Set as docs/deploying.md says, by environment variables (a PEM mounted from a volume of the site's own). */
    @Test
    void aDownstreamWithACertificateOfTheBundlesTrustIsCalledOverTls() {
        runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                new org.springframework.core.env.SystemEnvironmentPropertySource("systemEnvironment", Map.of(
                        "ADAPTER_HTTP_SSLBUNDLE", "downstreams",
                        "SPRING_SSL_BUNDLE_PEM_DOWNSTREAMS_TRUSTSTORE_CERTIFICATE", "file:" + TLS.certificatePem())))).run(context -> {
            int before = SIMULATOR.tlsRequests();

            Exchange answer = get(context.getBean(CamelContext.class), "https://localhost:" + PORT + "/legacy/patients/P-TLS-1");

            assertThat(answer.getException()).isNull();
            assertThat(answer.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class)).isEqualTo(200);
            assertThat(answer.getMessage().getBody(String.class)).contains("P-TLS-1");
            assertThat(SIMULATOR.tlsRequests()).isEqualTo(before + 1);
        });
    }

    /** The bundle trusts the certificate, but it is not 127.0.0.1's: refused before anything is sent. */
    @Test
    void aCertificateForAnotherHostIsRefusedWhateverTheTrust() {
        runner.withPropertyValues(bundle("downstreams")).run(context -> {
            int before = SIMULATOR.tlsRequests();

            Exchange answer = get(context.getBean(CamelContext.class), "https://127.0.0.1:" + PORT + "/legacy/patients/P-TLS-2");

            assertThat(answer.getException()).isInstanceOf(javax.net.ssl.SSLPeerUnverifiedException.class)
                    .hasMessageContaining("127.0.0.1");
            assertThat(SIMULATOR.tlsRequests()).isEqualTo(before);
        });
    }

    /** Without the setting the JVM's default trust decides: a private CA's certificate is refused. */
    @Test
    void withoutABundleTheJvmsDefaultTrustRefusesAPrivateCertificate() {
        runner.run(context -> {
            Exchange answer = get(context.getBean(CamelContext.class), "https://localhost:" + PORT + "/legacy/patients/P-TLS-3");

            assertThat(answer.getException()).isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
        });
    }

    /** A bundle name no bundle has stops the start, naming it: never a silent fall back to the JVM's trust. */
    @Test
    void aBundleNameThatNamesNoBundleStopsTheStart() {
        runner.withPropertyValues(bundle("downstreams")).withPropertyValues("adapter.http.ssl-bundle=downstream").run(context ->
                assertThat(context).getFailure().rootCause().isInstanceOf(org.springframework.boot.ssl.NoSuchSslBundleException.class)
                        .hasMessageContaining("'downstream'"));
    }

    /**
     * A bundle reloaded on update (cert-manager renewing the CA or a client certificate in the mounted files): the next
     * connection uses it, without a restart. Before, the TLS was read once at start, and a renewal went unused until a
     * rollout (an expiry became an outage). The bundle first trusts another certificate, so the call is refused; the
     * trusted file is then replaced by the server's.
     */
    @Test
    void aReloadedBundleIsUsedByTheNextConnection(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws java.io.IOException {
        java.nio.file.Path trusted = dir.resolve("ca.pem");
        java.nio.file.Files.copy(TestTls.localhost("other").certificatePem(), trusted);
        runner.withPropertyValues("adapter.http.ssl-bundle=rotating",
                "spring.ssl.bundle.pem.rotating.truststore.certificate=file:" + trusted,
                "spring.ssl.bundle.pem.rotating.reload-on-update=true",
                "spring.ssl.bundle.watch.file.quiet-period=100ms").run(context -> {
            CamelContext camel = context.getBean(CamelContext.class);
            String uri = "https://localhost:" + PORT + "/legacy/patients/P-TLS-4";
            assertThat(get(camel, uri).getException()).isInstanceOf(javax.net.ssl.SSLHandshakeException.class);

            java.nio.file.Path next = dir.resolve("next.pem");
            java.nio.file.Files.copy(TLS.certificatePem(), next);
            java.nio.file.Files.move(next, trusted, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);

            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> get(camel, uri).getException() == null);
            assertThat(get(camel, uri).getMessage().getBody(String.class)).contains("P-TLS-4");
        });
    }

    private static String[] bundle(String name) {
        return new String[] {"adapter.http.ssl-bundle=" + name,
                "spring.ssl.bundle.pem." + name + ".truststore.certificate=file:" + TLS.certificatePem()};
    }

    private static Exchange get(CamelContext camel, String uri) {
        return camel.createProducerTemplate().request(uri, exchange -> exchange.getIn().setHeader(Exchange.HTTP_METHOD, "GET"));
    }
}
