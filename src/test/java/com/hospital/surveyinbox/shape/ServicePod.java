package com.hospital.surveyinbox.shape;

import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.ServiceJvm;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One pod of the production-shape harness: the real application in a JVM of its own, with its own public and
 * management ports, pointed at the test JVM's PostgreSQL (through the harness's proxy), Kafka, Redis and
 * downstream simulator. Started, probed for readiness and stopped the way Kubernetes does it.
 */
final class ServicePod implements AutoCloseable {

    /** Small and quick to start: three of these share two cores with the database and the broker. */
    static final List<String> JVM = java.util.stream.Stream.concat(java.util.stream.Stream.of("-Xmx320m"),
            ServiceJvm.QUICK_START.stream()).toList();

    final String name;
    final int port;
    final int managementPort;
    private final ServiceJvm jvm;

    private ServicePod(String name, int port, int managementPort, ServiceJvm jvm) {
        this.name = name;
        this.port = port;
        this.managementPort = managementPort;
        this.jvm = jvm;
    }

    static ServicePod start(String name, Map<String, String> properties) {
        int port = EmbeddedServices.freePort();
        int management = EmbeddedServices.freePort();
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("server.port", port);
        arguments.put("management.server.port", management);
        arguments.putAll(properties);
        return new ServicePod(name, port, management, ServiceJvm.start("pod-" + name, JVM, ServiceJvm.SERVICE, arguments));
    }

    /** Ready as the kubelet sees it: the readiness probe answers 200 (else killed, the failure with its log's tail). */
    ServicePod awaitReady(Duration timeout) {
        jvm.awaitReady(timeout, ServiceJvm.readinessProbe(managementPort));
        return this;
    }

    /** SIGTERM, as the kubelet sends it after the pod left the endpoints; SIGKILL after the grace period. */
    boolean terminate(Duration grace) throws InterruptedException {
        return jvm.terminate(grace);
    }

    boolean alive() {
        return jvm.alive();
    }

    String log() {
        return jvm.log();
    }

    String tail() {
        return jvm.tail();
    }

    /** Killed at once (SIGKILL), as a node failure or an end of the harness does. */
    @Override
    public void close() {
        jvm.close();
    }
}
