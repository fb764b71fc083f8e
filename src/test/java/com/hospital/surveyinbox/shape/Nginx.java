package com.hospital.surveyinbox.shape;

import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.ServiceClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;

/**
 * The ingress of the production-shape harness: Debian's nginx (installed on first use when missing, as root,
 * like the browser tests' Chromium), run from a generated configuration in a folder of its own. Round robin
 * over the pods, X-Forwarded-For the client's address (ingress-nginx's default), a POST never retried on another pod (nginx's and ingress-nginx's
 * default), and each answer names the pod that gave it ({@code X-Upstream}). Taking a pod out is a graceful
 * reload, as when a pod leaves the Service's endpoints before its SIGTERM.
 */
final class Nginx implements AutoCloseable {

    /** Where the ingress connects to the pods from: the pods' one trusted proxy (adapter.security.trusted-proxies). */
    static final String ADDRESS = "127.0.0.2";

    /** The Ingress the harness stands for: its annotations set the timeouts and body limit written below. */
    static final Path INGRESS = Path.of("k8s/overlays/prod/ingress.yaml");

    /** The ingress-nginx annotations this nginx reproduces: any other on the Ingress fails the harness's start. */
    static final Set<String> MAPPED = Set.of("proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "proxy-body-size");

    /**
     * An ingress-nginx annotation of {@link #INGRESS} ({@code nginx.ingress.kubernetes.io/<name>}), else ingress-nginx's
     * own default: the harness's nginx waits, connects and limits bodies as the production ingress does, not by
     * values of its own that drift from it.
     */
    @SuppressWarnings("unchecked")
    static String annotation(String name, String ingressNginxDefault) {
        try {
            java.util.Map<String, Object> ingress = new org.yaml.snakeyaml.Yaml().load(Files.readString(INGRESS));
            java.util.Map<String, Object> metadata = (java.util.Map<String, Object>) ingress.get("metadata");
            java.util.Map<String, Object> annotations = (java.util.Map<String, Object>) metadata.getOrDefault("annotations", java.util.Map.of());
            // an annotation added to the Ingress (buffering, retries, a snippet) and not reproduced here would leave
            // the harness's ingress other than production's without a word
            java.util.List<String> unmapped = annotations.keySet().stream().filter(k -> k.startsWith("nginx.ingress.kubernetes.io/"))
                    .map(k -> k.substring("nginx.ingress.kubernetes.io/".length())).filter(k -> !MAPPED.contains(k)).sorted().toList();
            if (!unmapped.isEmpty()) {
                throw new IllegalStateException(INGRESS + " carries ingress-nginx annotations the harness's nginx does not reproduce: "
                        + unmapped + " (map them in Nginx.writeConfig)");
            }
            Object value = annotations.get("nginx.ingress.kubernetes.io/" + name);
            return value == null ? ingressNginxDefault : value.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private final Path dir;
    final int port;
    private Set<Integer> upstreams;

    private final Thread quitOnExit = new Thread(this::quit, "ingress-nginx-quit");

    private Nginx(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    static Nginx start(Collection<Integer> pods) {
        binary();
        try {
            Path dir = Files.createTempDirectory("ingress-nginx-");
            for (String temp : new String[] {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
                Files.createDirectories(dir.resolve(temp));
            }
            Nginx nginx = new Nginx(dir, EmbeddedServices.freePort());
            nginx.writeConfig(pods);
            nginx.run("-g", "daemon on;");
            // a daemon outlives this JVM: stopped by a JVM that ends without the class's @AfterAll (SIGTERM, a
            // failed start below), never left listening for the next run
            Runtime.getRuntime().addShutdownHook(nginx.quitOnExit);
            try {
                nginx.awaitServing(Set.copyOf(pods));
            } catch (RuntimeException | Error e) {
                nginx.close();
                throw e;
            }
            return nginx;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The pods the ingress routes to from now on; returns once no answer comes from another pod. */
    void route(Collection<Integer> pods) {
        writeConfig(pods);
        run("-s", "reload");
        awaitServing(Set.copyOf(pods));
    }

    Set<Integer> upstreams() {
        return upstreams;
    }

    private void writeConfig(Collection<Integer> pods) {
        upstreams = Set.copyOf(pods);
        String servers = pods.stream().map(p -> "        server 127.0.0.1:" + p + " max_fails=0;")
                .collect(Collectors.joining("\n"));
        String config = """
                user root;
                worker_processes 1;
                pid %1$s/nginx.pid;
                error_log %1$s/error.log warn;
                events { worker_connections 2048; }
                http {
                    access_log off;
                    client_body_temp_path %1$s/client_body;
                    proxy_temp_path %1$s/proxy;
                    fastcgi_temp_path %1$s/fastcgi;
                    uwsgi_temp_path %1$s/uwsgi;
                    scgi_temp_path %1$s/scgi;
                    upstream adapter {
                %2$s
                        keepalive 32;
                    }
                    server {
                        listen 127.0.0.1:%3$d;
                        location / {
                            proxy_pass http://adapter;
                            proxy_http_version 1.1;
                            proxy_set_header Connection "";
                            proxy_set_header Host $host;
                            # ingress-nginx's default (use-forwarded-headers and compute-full-forwarded-for off):
                            # the client's address alone, whatever X-Forwarded-For the client sent
                            proxy_set_header X-Forwarded-For $remote_addr;
                            # the ingress's own address towards the pods, apart from the clients' (all on loopback here)
                            proxy_bind %4$s;
                            # nginx's default: a connection error moves an idempotent request to the next pod,
                            # never a POST (non_idempotent is not listed)
                            proxy_next_upstream error timeout;
                            # as the production Ingress: its annotations, else ingress-nginx's defaults
                            proxy_connect_timeout %5$ss;
                            proxy_read_timeout %6$ss;
                            proxy_send_timeout %7$ss;
                            client_max_body_size %8$s;
                            add_header X-Upstream $upstream_addr always;
                        }
                    }
                }
                """.formatted(dir, servers, port, ADDRESS, annotation("proxy-connect-timeout", "5"),
                annotation("proxy-read-timeout", "60"), annotation("proxy-send-timeout", "60"),
                annotation("proxy-body-size", "1m"));
        try {
            Files.writeString(dir.resolve("nginx.conf"), config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every answer from the listed pods only, and the previous generation of workers gone (its requests done). */
    private void awaitServing(Set<Integer> pods) {
        Set<String> expected = pods.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.toSet());
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            HttpClient fresh = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < 2 * pods.size() + 2; i++) {
                try {
                    HttpResponse<Void> answer = fresh.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                                    + "/ops/inbox/stats")).header("Authorization", ServiceClient.OPS_AUTH)
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
                    seen.add(answer.headers().firstValue("X-Upstream").orElse("none"));
                } catch (IOException e) {
                    return false;
                }
            }
            // every pod named answers (round robin over 2n+2 requests), none other: a pod added is shown to get traffic
            return expected.equals(seen) && workers() <= 1;
        });
    }

    /** Worker processes of the master: more than one while an old generation finishes its requests. */
    private long workers() throws IOException {
        long master = Long.parseLong(Files.readString(dir.resolve("nginx.pid")).strip());
        return ProcessHandle.of(master).map(h -> h.children().count()).orElse(0L);
    }

    private void run(String... args) {
        String[] command = new String[args.length + 5];
        command[0] = binary().toString();
        command[1] = "-p";
        command[2] = dir.toString();
        command[3] = "-c";
        command[4] = dir.resolve("nginx.conf").toString();
        System.arraycopy(args, 0, command, 5, args.length);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException("nginx " + String.join(" ", args) + " failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static synchronized Path binary() {
        return com.hospital.surveyinbox.support.Tools.require("the production-shape harness's ingress", java.util.List.of("nginx"),
                java.util.List.of("nginx"));
    }

    @Override
    public void close() {
        quit();
        try {
            Runtime.getRuntime().removeShutdownHook(quitOnExit);
        } catch (IllegalStateException | IllegalArgumentException alreadyExitingOrGone) {
            // the JVM is exiting (the hook runs), or it was removed before
        }
    }

    private void quit() {
        try {
            run("-s", "quit");
        } catch (RuntimeException ignored) {
            // already gone
        }
    }
}
