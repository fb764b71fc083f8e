package com.hospital.surveyinbox;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Entry point of the production jar. The local run with embedded services is {@code LocalRun} on the test classpath. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SurveyInboxAdapterApplication {

    public static void main(String[] args) {
        SpringApplication.run(SurveyInboxAdapterApplication.class, args);
    }
}
