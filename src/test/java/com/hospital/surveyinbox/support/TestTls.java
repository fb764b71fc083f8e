package com.hospital.surveyinbox.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A self-signed certificate for {@code localhost} (a name, not 127.0.0.1), made once per JVM by the JDK's keytool: a
 * downstream served over TLS with it ({@link DownstreamSimulator#serveTls}) and its PEM as the trust a client is
 * given (a hospital's own CA plays the same part). Nothing is downloaded, nothing of it is kept after the JVM.
 */
public final class TestTls {

    private static final char[] PASSWORD = "changeit".toCharArray();
    private static final java.util.Map<String, TestTls> MADE = new java.util.HashMap<>();

    private final Path certificatePem;
    private final SSLContext serverContext;

    private TestTls(Path certificatePem, SSLContext serverContext) {
        this.certificatePem = certificatePem;
        this.serverContext = serverContext;
    }

    /** The certificate (PEM) a client trusts to reach the server. */
    public Path certificatePem() {
        return certificatePem;
    }

    /** The server's TLS, its key and the certificate for {@code localhost}. */
    public SSLContext serverContext() {
        return serverContext;
    }

    public static TestTls localhost() {
        return localhost("server");
    }

    /** Another self-signed certificate for {@code localhost} for each {@code name}: one the other's trust does not take. */
    public static synchronized TestTls localhost(String name) {
        TestTls made = MADE.get(name);
        if (made == null) {
            try {
                Path dir = Files.createTempDirectory("test-tls-" + name);
                dir.toFile().deleteOnExit();
                Path store = dir.resolve("server.p12");
                Path pem = dir.resolve("server.pem");
                keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                        "-ext", "SAN=dns:localhost", "-validity", "3", "-keystore", store.toString(), "-storetype", "PKCS12",
                        "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD));
                keytool("-exportcert", "-rfc", "-alias", "server", "-keystore", store.toString(), "-storepass", new String(PASSWORD),
                        "-file", pem.toString());
                store.toFile().deleteOnExit();
                pem.toFile().deleteOnExit();
                KeyStore keys = KeyStore.getInstance("PKCS12");
                try (InputStream in = Files.newInputStream(store)) {
                    keys.load(in, PASSWORD);
                }
                KeyManagerFactory managers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                managers.init(keys, PASSWORD);
                SSLContext server = SSLContext.getInstance("TLS");
                server.init(managers.getKeyManagers(), null, null);
                made = new TestTls(pem, server);
                MADE.put(name, made);
            } catch (IOException | java.security.GeneralSecurityException e) {
                throw new IllegalStateException("test TLS material", e);
            }
        }
        return made;
    }

    private static void keytool(String... args) throws IOException {
        List<String> command = new java.util.ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (process.waitFor() != 0) {
                throw new IOException("keytool " + args[0] + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("keytool interrupted", e);
        }
    }
}
