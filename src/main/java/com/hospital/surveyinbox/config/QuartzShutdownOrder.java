package com.hospital.surveyinbox.config;

import java.util.Arrays;
import java.util.stream.Stream;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Boot hands the DataSource to Quartz through a customizer, so nothing orders their destruction: the
 * connection pool can close while a Quartz worker still has to record its job's completion, and that
 * worker then retries forever, hanging shutdown (seen: a pod that never terminates). Declaring the
 * dependency makes Spring shut the scheduler down first.
 */
@Configuration
public class QuartzShutdownOrder {

    static final String SCHEDULER = "quartzScheduler";
    static final String DATA_SOURCE = "dataSource";

    @Bean
    static BeanFactoryPostProcessor quartzSchedulerDependsOnDataSource() {
        return beanFactory -> {
            if (beanFactory.containsBeanDefinition(SCHEDULER) && beanFactory.containsBeanDefinition(DATA_SOURCE)) {
                BeanDefinition scheduler = beanFactory.getBeanDefinition(SCHEDULER);
                String[] current = scheduler.getDependsOn() == null ? new String[0] : scheduler.getDependsOn();
                if (!Arrays.asList(current).contains(DATA_SOURCE)) {
                    scheduler.setDependsOn(Stream.concat(Arrays.stream(current), Stream.of(DATA_SOURCE)).toArray(String[]::new));
                }
            }
        };
    }
}
